// Which answer a retried request gets: per episode, the outcome of each Idempotency-Key, so a
// client's retry never makes a second sample. Each episode has its own bounded memory (one episode
// cannot push another's keys out), entries expire, and the memory of the least recently used
// episodes goes first. No I/O.

/** Keys remembered per episode (SDKs send a fresh key per request; retries come within seconds). */
const KEYS_PER_EPISODE = 256;
/** Episodes whose keys are remembered. */
const EPISODES = 1024;
/** How long a key's answer is kept (ms). */
const TTL_MS = 10 * 60_000;

/**
 * A memory of answers by (episode, key).
 * @example const m = idempotencyMemory<Answer>(); m.get(ep, key) ?? m.set(ep, key, answer);
 */
export function idempotencyMemory<T>(now: () => number = Date.now) {
  const episodes = new Map<string, Map<string, { value: T; at: number }>>();
  const keysOf = (episode: string) => {
    let keys = episodes.get(episode);
    if (keys) episodes.delete(episode); // re-inserted below: most recently used last
    keys ??= new Map();
    episodes.set(episode, keys);
    if (episodes.size > EPISODES) episodes.delete(episodes.keys().next().value!);
    return keys;
  };
  return {
    get(episode: string, key: string): T | undefined {
      const e = episodes.get(episode)?.get(key);
      return e && now() - e.at <= TTL_MS ? e.value : undefined;
    },
    set(episode: string, key: string, value: T): void {
      const keys = keysOf(episode);
      keys.set(key, { value, at: now() });
      if (keys.size > KEYS_PER_EPISODE) keys.delete(keys.keys().next().value!);
    },
    delete(episode: string, key: string): void {
      episodes.get(episode)?.delete(key);
    },
  };
}

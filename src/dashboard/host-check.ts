// Which Host headers the dashboard answers: loopback names, the address it was bound to, names the
// caller allows, and IP literals. Anything else is a page on another site reaching the local server
// through a DNS name that now points here (DNS rebinding), answered 403. Pure over the header.

const LOOPBACK = ["localhost", "127.0.0.1", "[::1]"];

/** A Host header: a name or a bracketed IPv6 literal, then an optional port, and nothing else. */
const HOST = /^(\[[^\]]*\]|[^:[\]]*)(?::\d+)?$/;
const IPV4 = /^\d{1,3}(\.\d{1,3}){3}$/;

/** The names a dashboard bound to `bound` answers besides IP literals: loopback, `bound` itself unless a wildcard, and `extra`. */
export function allowedHostNames(bound: string | undefined, extra: readonly string[] = []): string[] {
  const names = [...LOOPBACK, ...extra.map((h) => h.toLowerCase())];
  if (bound && bound !== "0.0.0.0" && bound !== "::" && bound !== "[::]")
    names.push(bound.includes(":") && !bound.startsWith("[") ? `[${bound.toLowerCase()}]` : bound.toLowerCase());
  return names;
}

/**
 * Whether a request's Host header may be answered. IP literals always pass: a rebinding attack needs
 * a DNS name, and a browser that typed the address is on that origin. A missing header passes
 * (HTTP/1.0 clients send none; no browser does that).
 * @example
 * dashboardHostAllowed("localhost:8377", allowedHostNames("127.0.0.1")); // true
 * dashboardHostAllowed("evil.example:8377", allowedHostNames("127.0.0.1")); // false
 */
export function dashboardHostAllowed(host: string | undefined, names: readonly string[]): boolean {
  if (host === undefined) return true;
  const name = HOST.exec(host.trim())?.[1]?.toLowerCase();
  if (name === undefined || name === "") return false;
  return names.includes(name) || IPV4.test(name) || (name.startsWith("[") && name.endsWith("]"));
}

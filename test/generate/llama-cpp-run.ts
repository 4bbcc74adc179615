// Test helper: greedy generation by llama.cpp itself (node-llama-cpp's prebuilt CPU binary) from a
// GGUF file, tokenising the prompt text with the file's own tokenizer metadata. Test code only.
// node-llama-cpp (718 MB of platform binaries) is not a dependency: .ci/run installs it for these
// tests (npm install --no-save node-llama-cpp@3.21.1); without it they are skipped and say so.

interface Seq {
  evaluate(tokens: number[], opts: { temperature: number }): AsyncGenerator<number>;
}
interface LlamaModel {
  tokenize(text: string, specialTokens?: boolean): number[];
  detokenize(tokens: readonly number[], specialTokens?: boolean): string;
  fileInfo: { metadata: { tokenizer?: { chat_template?: string; ggml?: Record<string, unknown> } } };
  createContext(o: object): Promise<{ getSequence(): Seq; dispose(): Promise<void> }>;
  dispose(): Promise<void>;
}
interface NodeLlamaCpp {
  getLlama(opts: object): Promise<{ loadModel(o: { modelPath: string }): Promise<LlamaModel> }>;
  LlamaLogLevel: { error: unknown };
}

/** node-llama-cpp, or why it is absent; the specifier is a variable so tsc does not resolve it. */
const LLAMA_CPP = "node-llama-cpp";
const llamaCpp = await import(LLAMA_CPP).then(
  (m) => m as NodeLlamaCpp,
  (e: Error) => e.message.split("\n")[0],
);

/** "" when node-llama-cpp is installed, else a " (skipped: …)" suffix for test names. */
export const LLAMA_CPP_SKIPPED = typeof llamaCpp === "string" ? ` (skipped: ${llamaCpp}; npm install --no-save node-llama-cpp@3.21.1)` : "";
if (LLAMA_CPP_SKIPPED !== "") console.warn(`llama.cpp checks${LLAMA_CPP_SKIPPED}`);

/** What llama.cpp made of a prompt: its prompt ids, `n` greedy ids and their text, and the chat template it read. */
export interface LlamaGreedy {
  promptTokens: number[];
  tokens: number[];
  text: string;
  chatTemplate: string | undefined;
}

/**
 * Loads `path` in llama.cpp, tokenises `prompt` (parsing special tokens, as a chat prompt needs) and
 * generates `n` tokens greedily, without stopping at end-of-generation tokens.
 * `prompt` may also be ready ids, for files without tokenizer metadata.
 */
export async function llamaGreedy(path: string, prompt: string | number[], n: number): Promise<LlamaGreedy> {
  if (typeof llamaCpp === "string") throw new Error(`node-llama-cpp is not installed: ${llamaCpp}`);
  const mod = llamaCpp;
  const llama = await mod.getLlama({ gpu: false, build: "never", logLevel: mod.LlamaLogLevel.error });
  const m = await llama.loadModel({ modelPath: path });
  try {
    const promptTokens = typeof prompt === "string" ? [...m.tokenize(prompt, true)] : prompt;
    const ctx = await m.createContext({ contextSize: 256, sequences: 1 });
    const tokens: number[] = [];
    for await (const t of ctx.getSequence().evaluate(promptTokens, { temperature: 0 })) {
      tokens.push(t);
      if (tokens.length >= n) break;
    }
    await ctx.dispose();
    return { promptTokens, tokens, text: m.detokenize(tokens, true), chatTemplate: m.fileInfo.metadata.tokenizer?.chat_template };
  } finally {
    await m.dispose();
  }
}

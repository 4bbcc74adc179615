// Test helper: greedy generation by llama.cpp itself (node-llama-cpp's prebuilt CPU binary) from a
// GGUF file, tokenising the prompt text with the file's own tokenizer metadata. Test code only.

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
  const mod = (await import("node-llama-cpp")) as unknown as NodeLlamaCpp;
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

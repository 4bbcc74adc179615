// Writes a learned byte-level BPE as standard HF files: tokenizer.json (BPE model, Split + ByteLevel
// pre-tokenizer, ByteLevel decoder) and tokenizer_config.json with a ChatML chat template.
// It formats and writes only; learning is in bpe-trainer.ts, loading in hf-tokenizer.ts.
import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { MasoError } from "../../errors.js";
import { BPE_SPLIT_PATTERN, type BpeModel } from "./bpe-trainer.js";

/**
 * ChatML (Qwen2 style, no default system prompt) with Qwen2.5's tool section: `tools` in a system
 * block, assistant `tool_calls` as `<tool_call>{"name", "arguments"}</tool_call>` blocks. Messages
 * without tools render exactly as plain ChatML.
 */
export const CHATML_TEMPLATE =
  "{%- if tools %}{{- '<|im_start|>system\\n' }}" +
  "{%- if messages[0]['role'] == 'system' %}{{- messages[0]['content'] + '\\n\\n' }}" +
  "{%- endif %}{{- '# Tools\\n\\nYou may call one or more functions to assist with the user query.\\n\\nYou are provided with function signatures within <tools></tools> XML tags:\\n<tools>' }}" +
  "{%- for tool in tools %}{{- '\\n' + (tool | tojson) }}" +
  '{%- endfor %}{{- \'\\n</tools>\\n\\nFor each function call, return a json object with function name and arguments within <tool_call></tool_call> XML tags:\\n<tool_call>\\n{"name": <function-name>, "arguments": <args-json-object>}\\n</tool_call><|im_end|>\\n\' }}' +
  "{%- endif %}{%- for message in messages %}" +
  "{%- if tools and loop.first and message['role'] == 'system' %}" +
  "{%- elif message['role'] == 'assistant' and message['tool_calls'] %}{{- '<|im_start|>assistant\\n' + message['content'] }}" +
  "{%- for call in message['tool_calls'] %}{%- if message['content'] or not loop.first %}{{- '\\n' }}" +
  "{%- endif %}{{- '<tool_call>\\n{\"name\": \"' + call['function']['name'] + '\", \"arguments\": ' }}" +
  "{%- if call['function']['arguments'] is string %}{{- call['function']['arguments'] }}" +
  "{%- else %}{{- call['function']['arguments'] | tojson }}{%- endif %}{{- '}\\n</tool_call>' }}" +
  "{%- endfor %}{{- '<|im_end|>\\n' }}" +
  "{%- else %}{{- '<|im_start|>' + message['role'] + '\\n' + message['content'] + '<|im_end|>' + '\\n' }}" +
  "{%- endif %}{%- endfor %}{%- if add_generation_prompt %}{{- '<|im_start|>assistant\\n' }}{%- endif %}";

/** Options of {@link bpeTokenizerFiles}. */
export interface BpeFileOptions {
  /** End-of-generation token (default `<|im_end|>`). */
  eosToken?: string;
  /** Padding token (default `<|endoftext|>`). */
  padToken?: string;
  /** Recorded as model_max_length (default 512). */
  modelMaxLength?: number;
}

/**
 * The text of `tokenizer.json` and `tokenizer_config.json` for a learned BPE.
 * @example
 * const files = bpeTokenizerFiles(trainBpe(texts)); const tok = hfTokenizerFromFiles(files);
 */
export function bpeTokenizerFiles(bpe: BpeModel, options: BpeFileOptions = {}): Record<"tokenizer.json" | "tokenizer_config.json", string> {
  const eos = options.eosToken ?? "<|im_end|>";
  const pad = options.padToken ?? "<|endoftext|>";
  const ids = new Map(bpe.vocab.map((s, i) => [s, i]));
  for (const t of [eos, pad]) {
    if (!bpe.specialTokens.includes(t))
      throw new MasoError("BPE_OPTIONS", `${t} is not one of the special tokens`, "add it to specialTokens");
  }
  const added = bpe.specialTokens.map((content) => ({
    id: ids.get(content)!,
    content,
    single_word: false,
    lstrip: false,
    rstrip: false,
    normalized: false,
    special: true,
  }));
  const vocab: Record<string, number> = {};
  for (const [i, s] of bpe.vocab.entries()) vocab[s] = i;
  const tokenizer = {
    version: "1.0",
    truncation: null,
    padding: null,
    added_tokens: added,
    normalizer: null,
    pre_tokenizer: {
      type: "Sequence",
      pretokenizers: [
        { type: "Split", pattern: { Regex: BPE_SPLIT_PATTERN }, behavior: "Isolated", invert: false },
        { type: "ByteLevel", add_prefix_space: false, trim_offsets: false, use_regex: false },
      ],
    },
    post_processor: { type: "ByteLevel", add_prefix_space: false, trim_offsets: false, use_regex: false },
    decoder: { type: "ByteLevel", add_prefix_space: false, trim_offsets: false, use_regex: false },
    model: {
      type: "BPE",
      dropout: null,
      unk_token: null,
      continuing_subword_prefix: "",
      end_of_word_suffix: "",
      fuse_unk: false,
      byte_fallback: false,
      ignore_merges: false,
      vocab,
      merges: bpe.merges,
    },
  };
  const addedDecoder: Record<string, unknown> = {};
  for (const a of added) addedDecoder[String(a.id)] = { ...a, id: undefined };
  const config = {
    add_bos_token: false,
    add_prefix_space: false,
    added_tokens_decoder: addedDecoder,
    additional_special_tokens: bpe.specialTokens.filter((t) => t !== eos && t !== pad),
    bos_token: null,
    eos_token: eos,
    pad_token: pad,
    unk_token: null,
    chat_template: CHATML_TEMPLATE,
    clean_up_tokenization_spaces: false,
    model_max_length: options.modelMaxLength ?? 512,
    split_special_tokens: false,
    tokenizer_class: "PreTrainedTokenizerFast",
  };
  return { "tokenizer.json": `${JSON.stringify(tokenizer)}\n`, "tokenizer_config.json": `${JSON.stringify(config, null, 2)}\n` };
}

/** Writes the files of {@link bpeTokenizerFiles} into `dir` (created if needed). */
export async function saveBpeTokenizer(dir: string, bpe: BpeModel, options: BpeFileOptions = {}): Promise<void> {
  await mkdir(dir, { recursive: true });
  for (const [name, text] of Object.entries(bpeTokenizerFiles(bpe, options))) await writeFile(join(dir, name), text);
}

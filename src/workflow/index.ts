// The workflow layer's public surface, listed explicitly for src/index.ts to re-export.
// Test doubles (scripted-caller) and test helpers are exported separately, by name.

export { END, START } from "./graph-types.js";
export type { NodeContext, RouteContext } from "./context.js";
export type { End, NodeSpec, NodeUpdate, Outgoing, LoopSpec, Start, Workflow } from "./graph-types.js";
export { workflow } from "./graph.js";
export type {
  FanOutSpec,
  FunctionNodeOptions,
  LoopOptions,
  RoleNodeOptions,
  ToolNodeOptions,
  WorkflowBuilder,
  WorkflowOptions,
} from "./graph.js";
export { DEFAULT_MAX_NEW_TOKENS, DEFAULT_SAMPLING, defineRole, parseRoleOutput, safeParse, totalParser } from "./role.js";
// ChatMessage is the tokenizer's type (src/engine/tokenizer/types.ts); it is not re-exported here
export type { ParseResult, Parser, Role, RoleSpec, Sampling } from "./role.js";
export { boxedParser, jsonStringListParser, MAX_PARSE_CHARS, searchOrEndParser, tagParser, tagsParser, textParser } from "./parsers.js";
export type {
  JsonListOptions,
  SearchAction,
  SearchOrEndOptions,
  TagParserOptions,
  TagsParserOptions,
  TextParserOptions,
} from "./parsers.js";
export { approxTokenCount, dropOldest, truncateMessages } from "./truncate.js";
export type { PromptParts, TokenCounter, Truncated } from "./truncate.js";
export { append, applyUpdate, replace } from "./state.js";
export type { Reducer, Reducers, StateUpdate } from "./state.js";
export { callTool, DEFAULT_TOOL_TIMEOUT_MS, defineTool } from "./tool.js";
export { DEFAULT_EPISODE_TIMEOUT_MS, DEFAULT_NODE_TIMEOUT_MS } from "./deadline.js";
export type { Tool, ToolResult } from "./tool.js";
export { runEpisodes } from "./runner.js";
export type { RunOptions } from "./runner.js";
export type { EpisodeInput } from "./episode.js";
export type { OutputLogprob, RoleCaller, RoleCallRequest, RoleCallResult } from "./role-call.js";
export { isFormatFailure, isTrainable, trajectoryFromJson, trajectoryToJson } from "./trajectory.js";
export type {
  EpisodeFailure,
  EpisodeStatus,
  ParsedOutput,
  PromptTruncation,
  SampleHandle,
  StepRecord,
  ToolCallRecord,
  Trajectory,
  JudgeRecord,
} from "./trajectory.js";
export { appendTrajectories, readTrajectories, trajectoryFile } from "./trajectory-writer.js";
export { scriptedCaller } from "./scripted-caller.js";
export type { ScriptedCaller } from "./scripted-caller.js";

// Public surface of the gateway: the OpenAI-compatible front door onto the models being trained.
// Re-exports only; src/index.ts picks from here explicitly.

export { type AgentContext, type AgentFn, type AgentModule, type AgentResult, agentModule, isAgentModule } from "./agent-module.js";
export { agentReward, type AgentState, type CallOutput } from "./agent-rewards.js";
export { agentWorkflow, agentWorkflowExports, checkAgentResult } from "./agent-workflow.js";
export { type CommandAgentOptions, commandAgent } from "./command-agent.js";
export { createEpisodeRegistry, type EpisodeHandler, type EpisodeRegistry } from "./episode-registry.js";
export { gatewayHost } from "./host.js";
export { gatewayApp, MAX_BODY_BYTES } from "./app.js";
export { IGNORED_FIELDS, parseChatRequest } from "./chat-request.js";
export { type GatewayError, GatewayRefusal } from "./openai-error.js";
export { parseReply, parseToolCalls } from "./reply.js";
export { type GatewayServer, serveGateway } from "./serve.js";
export type {
  GatewayBackend,
  GatewayCall,
  GatewayCompletion,
  GatewayMessage,
  GatewayTool,
  GatewayToolCall,
  ParsedReply,
  ResponseFormat,
} from "./types.js";

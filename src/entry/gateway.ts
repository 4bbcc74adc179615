// `maso/gateway`: train agents written with any OpenAI- or Anthropic-compatible SDK
// (docs/gateway.md) — the agent module, its workflow and reward, and the HTTP front door.
export {
  type AgentContext,
  type AgentFn,
  type AgentModule,
  type AgentResult,
  agentModule,
  agentReward,
  agentWorkflow,
  agentWorkflowExports,
  type AgentState,
  commandAgent,
  createEpisodeRegistry,
  gatewayApp,
  type GatewayBackend,
  type GatewayCall,
  type GatewayCompletion,
  GatewayRefusal,
  type GatewayServer,
  parseReply,
  parseToolCalls,
  serveGateway,
} from "../gateway/index.js";

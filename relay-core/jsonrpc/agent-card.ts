// The agent card at /.well-known/agent-card.json: what a standard A2A client reads before it calls /a2a.
const SKILL_DESCRIPTION = [
  'Hand work to a teammate (their agent and, in Slack, the person). Send one message:',
  'text parts = the summary;',
  'message.metadata (or a data part) = { recipient: "name@team", intent: "inform" | "ask_question" | "propose_action",',
  'question? (ask_question only), proposed_action? { description, target_files[], rationale, suggested_diff? } (required for propose_action),',
  'artifacts? [{ type: "file_diff" | "file_ref" | "test_command" | "api_contract" | "link", … }] };',
  'messageId is the idempotency key.',
  'The task stays submitted until the recipient accepts (working), completes (completed) or declines (rejected);',
  'the sender may cancel it. Poll GetTask (tasks/get in v0.3), or follow it with SubscribeToTask / SendStreamingMessage (A2A 1.0, SSE); contextId is the thread id.',
].join(' ');

/**
 * The card at /.well-known/agent-card.json, one document both SDK generations read: the v1.0 fields in proto
 * JSON (supportedInterfaces with a 1.0 and a 0.3 JSON-RPC entry, securityRequirements, httpAuthSecurityScheme)
 * plus the v0.3 fields (url, preferredTransport, protocolVersion, security, `type`-tagged scheme). A v1.0
 * reader takes supportedInterfaces first (the SDK's own "superset" card works the same way). No secrets.
 */
export function agentCard(opts: { publicUrl: string; version: string }): Record<string, unknown> {
  const url = `${opts.publicUrl.replace(/\/+$/, '')}/a2a`;
  const bearer = {
    description: 'The teammate API key handoff-relay issued (POST /admin/agents or `handoff-relay register`)',
    bearerFormat: 'hr_<key id>_<secret>',
  };
  const modes = ['text/plain', 'application/json'];
  return {
    name: 'handoff-relay',
    description:
      "Structured handoffs between developers' AI agents: send a teammate a summary, an intent and typed artifacts; " +
      'they get it in Slack and through their own agent, and accept, complete or decline it.',
    supportedInterfaces: [
      { url, protocolBinding: 'JSONRPC', protocolVersion: '1.0' },
      { url, protocolBinding: 'JSONRPC', protocolVersion: '0.3' },
    ],
    version: opts.version,
    capabilities: { streaming: true, pushNotifications: true, extendedAgentCard: false },
    securitySchemes: {
      bearer: { httpAuthSecurityScheme: { scheme: 'Bearer', ...bearer }, type: 'http', scheme: 'bearer', ...bearer },
    },
    securityRequirements: [{ schemes: { bearer: { list: [] } } }],
    defaultInputModes: modes,
    defaultOutputModes: modes,
    skills: [
      {
        id: 'handoff',
        name: 'Hand off to a teammate',
        description: SKILL_DESCRIPTION,
        tags: ['handoff', 'code-review', 'question', 'collaboration'],
        examples: [
          'metadata { "recipient": "web-dev@acme", "intent": "ask_question", "question": "Does the web client page through /users?" } ' +
            'with text "I refactored /users: it now returns { items, next_cursor }."',
        ],
        inputModes: modes,
        outputModes: modes,
      },
    ],
    // v0.3 readers
    url,
    preferredTransport: 'JSONRPC',
    protocolVersion: '0.3.0',
    security: [{ bearer: [] }],
  };
}

// The agent card at /.well-known/agent-card.json: what a standard A2A client reads before it calls /a2a.
// Not @a2a-js/sdk's agentCardHandler: with v0.3 compat on, a request without A2A-Version gets the v0.3 card (and the query parameter is not read), where this relay answers the v1.0 card unless 0.3 is asked for.
const SKILL_DESCRIPTION = [
  'Hand work to a teammate (their agent and, in Slack, the person). Send one message:',
  'text parts = the summary;',
  'message.metadata (or a data part) = { recipient: "name@team" or "role:<role>" | "skill:<skill>" | "owner:<path>",',
  'intent: "inform" | "ask_question" | "propose_action",',
  'question? (ask_question only), proposed_action? { description, target_files[], rationale, suggested_diff? } (required for propose_action),',
  'artifacts? (typed: file diffs, file references, commands to run, API contracts, links) };',
  'messageId is the idempotency key.',
  'The task stays submitted until the recipient accepts (working), completes (completed) or declines (rejected);',
  'the sender may cancel it. Poll GetTask (tasks/get in v0.3) or ListTasks, or follow it with SubscribeToTask / SendStreamingMessage',
  '(A2A 1.0, SSE); contextId is the thread id.',
].join(' ');

/** The card's protocol versions: each reads its own card shape (v1.0 proto JSON, v0.3 `type`-tagged security). */
export type CardVersion = '1.0' | '0.3';

/**
 * Which card a request asks for: `A2A-Version: 0.3` (header, or the `A2A-Version` query parameter the spec allows
 * instead) gets the v0.3 card; anything else the v1.0 card, which also names the 0.3 interface.
 */
export function cardVersionOf(header: string | undefined, query: unknown): CardVersion {
  const asked = (header ?? (typeof query === 'string' ? query : '')).trim();
  return /^0\.3(\.\d+)?$/.test(asked) ? '0.3' : '1.0';
}

/**
 * The card at /.well-known/agent-card.json. Each protocol version gets its own security scheme shape, never both in
 * one object: v1.0 (proto JSON: supportedInterfaces with a 1.0 and a 0.3 JSON-RPC entry, securityRequirements,
 * `httpAuthSecurityScheme`), or, asked for with `A2A-Version: 0.3`, the v0.3 card (url, preferredTransport,
 * protocolVersion, security, a `type`-tagged scheme). The v1.0 card keeps v0.3's url, preferredTransport and
 * protocolVersion, which no v1.0 field shares, so that a v0.3 client that reads only those still finds /a2a.
 * Public: it shows RELAY_PUBLIC_URL and nothing of the relay's insides, and no word that reads like a secret.
 */
export function agentCard(opts: {
  publicUrl: string;
  version: string;
  cardVersion?: CardVersion;
}): Record<string, unknown> {
  const url = `${opts.publicUrl.replace(/\/+$/, '')}/a2a`;
  const bearer = {
    description: 'Your teammate API key from this relay (handoff-relay register prints it once)',
    bearerFormat: 'handoff-relay API key',
  };
  const modes = ['text/plain', 'application/json'];
  const common = {
    name: 'handoff-relay',
    description:
      "Structured handoffs between developers' AI agents: send a teammate a summary, an intent and typed artifacts; " +
      'they get it in Slack and through their own agent, and accept, complete or decline it.',
    version: opts.version,
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
  };
  const v03Locator = { url, preferredTransport: 'JSONRPC', protocolVersion: '0.3.0' };
  if (opts.cardVersion === '0.3') {
    return {
      ...common,
      ...v03Locator,
      capabilities: { streaming: false, pushNotifications: false },
      securitySchemes: { bearer: { type: 'http', scheme: 'bearer', ...bearer } },
      security: [{ bearer: [] }],
    };
  }
  return {
    ...common,
    supportedInterfaces: [
      { url, protocolBinding: 'JSONRPC', protocolVersion: '1.0' },
      { url, protocolBinding: 'JSONRPC', protocolVersion: '0.3' },
    ],
    capabilities: { streaming: true, pushNotifications: true, extendedAgentCard: false },
    securitySchemes: { bearer: { httpAuthSecurityScheme: { scheme: 'Bearer', ...bearer } } },
    securityRequirements: [{ schemes: { bearer: { list: [] } } }],
    ...v03Locator,
  };
}

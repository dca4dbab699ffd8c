// `handoff-relay policy show | check FILE | apply FILE | test … | audit`: the policy from the command line.
import { readFile } from 'node:fs/promises';
import { parsePolicy } from '../relay-core/domain/policy';
import { closest, parseOptions, type CommandSpec, type OptionSpec } from './cli-help';

export type AdminCall = (method: 'GET' | 'POST' | 'PUT' | 'DELETE', path: string, body?: unknown) => Promise<any>;

const AUDIT_OPTIONS = {
  limit: { type: 'string', value: 'N', description: 'audit: how many refused calls, newest first' },
} satisfies Record<string, OptionSpec>;

const TEST_OPTIONS = {
  action: { type: 'string', value: 'ACTION', description: 'test: the call to try (handoff.create, handoff.accept, …)' },
  from: { type: 'string', value: 'A@T', description: "test: the handoff's sender" },
  to: { type: 'string', value: 'B@T', description: "test: the handoff's recipient" },
  actor: { type: 'string', value: 'H', description: 'test: who makes the call (the sender by default)' },
  via: { type: 'string', value: 'SURFACE', description: 'test: mcp, a2a, slack or rest' },
  intent: { type: 'string', value: 'I', description: 'test: inform, ask_question or propose_action' },
  artifacts: { type: 'string', value: 'T,T', description: 'test: artifact types attached (comma-separated)' },
  files: { type: 'string', value: 'P,P', description: 'test: target files (comma-separated)' },
  at: { type: 'string', value: 'ISO', description: 'test: the time of the call (now by default)' },
  file: { type: 'string', value: 'FILE', description: 'test: try this policy file instead of the applied one' },
} satisfies Record<string, OptionSpec>;

export const POLICY_COMMAND: CommandSpec = {
  name: 'policy',
  summary: 'read, validate, replace or try out the policy; list the calls it refused (admin key)',
  usage: [
    'policy show | check FILE | apply FILE | audit [--limit N]',
    'policy test --action ACTION --from A@T --to B@T [--actor H] [--via mcp|a2a|slack|rest] [--intent I]\n' +
      '                     [--artifacts file_diff,link] [--files infra/a.tf,…] [--at ISO] [--file FILE]',
  ],
  options: { ...AUDIT_OPTIONS, ...TEST_OPTIONS },
  examples: [
    'handoff-relay policy check policy.yaml',
    'handoff-relay policy apply policy.yaml',
    'handoff-relay policy test --action handoff.accept --from alice@acme --to bob@acme --via mcp',
    'handoff-relay policy audit --limit 20',
  ],
  env: 'RELAY_URL, RELAY_ADMIN_KEY (or the key file `npm start` wrote); check needs neither',
};

export async function policyCommand(
  argv: string[],
  admin: AdminCall,
  out: (text: string) => void,
  fail: (message: string) => Error,
): Promise<void> {
  const [sub, ...rest] = argv;
  const source = async (file: string | undefined) => {
    if (!file) throw fail(`policy ${sub} needs a FILE`);
    try {
      return await readFile(file, 'utf8');
    } catch (error) {
      throw fail(`cannot read ${file}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`);
    }
  };
  switch (sub) {
    case 'show': {
      const p = await admin('GET', '/admin/policy');
      out(
        `# version ${p.version} · default ${p.default} · ${p.rules.length} rules · applied ${p.applied_at ?? 'never'} by ${p.applied_by ?? '-'}\n${p.source}`,
      );
      return;
    }
    case 'check': {
      // Offline: the same parser the relay uses, so a file that passes here is one the relay takes.
      const file = rest[0];
      try {
        const policy = parsePolicy(await source(file), file);
        out(`${file}: valid · version ${policy.version} · default ${policy.default} · ${policy.rules.length} rules\n`);
      } catch (error) {
        throw fail((error as Error).message);
      }
      return;
    }
    case 'apply': {
      const file = rest[0];
      const answer = await admin('PUT', '/admin/policy', { source: await source(file) });
      out(
        `Applied ${file}: version ${answer.version}, ${answer.rules} rules (every relay process picks it up within 2 s).\n`,
      );
      return;
    }
    case 'test': {
      const { values } = parseOptions('policy test', TEST_OPTIONS, rest);
      for (const required of ['action', 'from', 'to'] as const)
        if (!values[required]) throw fail(`policy test needs --${required}`);
      const list = (v: string | undefined) =>
        v
          ? v
              .split(',')
              .map((s) => s.trim())
              .filter(Boolean)
          : undefined;
      const decision = await admin('POST', '/admin/policy/test', {
        action: values.action,
        from: values.from,
        to: values.to,
        ...(values.actor ? { actor: values.actor } : {}),
        ...(values.via ? { via: values.via } : {}),
        ...(values.intent ? { intent: values.intent } : {}),
        ...(values.artifacts ? { artifact_types: list(values.artifacts) } : {}),
        ...(values.files ? { target_files: list(values.files) } : {}),
        ...(values.at ? { at: values.at } : {}),
        ...(values.file ? { source: await source(values.file) } : {}),
      });
      out(
        `${decision.effect}  rule ${decision.rule_id ?? '(default)'}  policy ${decision.policy_version}${decision.reason ? `  reason: ${decision.reason}` : ''}\n`,
      );
      return;
    }
    case 'audit': {
      const { values } = parseOptions('policy audit', AUDIT_OPTIONS, rest);
      const { refusals } = await admin(
        'GET',
        `/admin/policy/audit${values.limit ? `?limit=${encodeURIComponent(values.limit)}` : ''}`,
      );
      if (refusals.length === 0) out('No refused calls.\n');
      for (const r of refusals) {
        out(
          `${r.at}  ${r.outcome}  ${r.action} by ${r.actor} via ${r.via}${r.thread_id ? ` thread ${r.thread_id}` : ''}  rule ${r.rule_id ?? '(default)'}  ${r.reason}\n`,
        );
      }
      return;
    }
    default: {
      const near = sub ? closest(sub, ['show', 'check', 'apply', 'test', 'audit']) : undefined;
      throw fail(
        `policy needs one of show, check FILE, apply FILE, test, audit${sub ? ` (not "${sub}"${near ? `; did you mean ${near}?` : ''})` : ''} (handoff-relay policy --help)`,
      );
    }
  }
}

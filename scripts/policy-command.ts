// `handoff-relay policy show | check FILE | apply FILE | test … | audit`: the policy from the command line.
import { readFile } from 'node:fs/promises';
import { parsePolicy } from '../relay-core/domain/policy';
import { closest, parseOptions } from './cli-help';
import { POLICY_AUDIT_OPTIONS, POLICY_TEST_OPTIONS } from './cli-commands';

import type { AdminCall } from './admin-commands';

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
      const { values } = parseOptions('policy test', POLICY_TEST_OPTIONS, rest);
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
      const { values } = parseOptions('policy audit', POLICY_AUDIT_OPTIONS, rest);
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

// Bench phase `policy`: what evaluating the policy adds to a call, in this process: `decide` for a create against
// the 50-rule policy none of whose rules match it (scripts/bench-policy-50.yaml, every rule read: the worst case),
// beside the default policy (no rules) as the baseline, alternated round by round. The served create with and without
// that policy is the paths phase run twice (BENCH_POLICY_FILE), which also counts FerretDB commands per create.
import { readFile } from 'node:fs/promises';
import * as path from 'node:path';
import { performance } from 'node:perf_hooks';
import { defaultPolicy, parsePolicy, type Policy } from '../relay-core/domain/policy';
import { decide, type PartyFacts, type PolicyRequest } from '../relay-core/domain/policy-decision';
import type { PhaseOutput } from './bench-measure';

const ROUNDS = 10;
const PER_ROUND = 20_000;

export async function benchPolicy(opts: PhaseOutput): Promise<void> {
  const file = path.join(__dirname, '..', '..', 'scripts', 'bench-policy-50.yaml');
  const fifty = parsePolicy(await readFile(file, 'utf8'), 'bench-policy-50.yaml');
  const none = defaultPolicy();
  const party = (handle: string): PartyFacts => ({
    handle,
    team: 'acme',
    role: 'engineer',
    skills: ['typescript', 'react'],
  });
  const request: PolicyRequest = {
    action: 'handoff.create',
    via: 'mcp',
    actor: party('sender@acme'),
    sender: party('sender@acme'),
    recipient: party('recipient@acme'),
    intent: 'propose_action',
    artifact_types: ['diff', 'file_ref', 'test_command'],
    target_files: ['apps/web/src/users.ts', 'apps/web/src/users.test.ts'],
    at: new Date(),
  };
  const time = (policy: Policy): number => {
    const started = performance.now();
    for (let i = 0; i < PER_ROUND; i += 1)
      if (decide(policy, request).effect !== 'allow') throw new Error('the bench policy matched the bench create');
    return ((performance.now() - started) * 1000) / PER_ROUND;
  };
  time(fifty);
  time(none); // warm-up
  const ours: number[] = [];
  const base: number[] = [];
  for (let round = 0; round < ROUNDS; round += 1) {
    ours.push(time(fifty));
    base.push(time(none));
  }
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
  opts.out('');
  opts.out(
    `Policy evaluation of one create, in this process (median of ${ROUNDS} rounds of ${PER_ROUND.toLocaleString('en')}):`,
  );
  opts.out(
    `  ${fifty.rules.length}-rule policy, no rule matching: ${median(ours).toFixed(2)} µs per decision; default policy (baseline): ${median(base).toFixed(2)} µs; ` +
      `added ${(median(ours) - median(base)).toFixed(2)} µs (${(median(ours) / median(base)).toFixed(1)}×)`,
  );
}

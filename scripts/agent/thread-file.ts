// The file a run's agent reads: the handoff as MCP's view_thread shows it, every teammate-authored part inside the
// same provenance markers (mcp/provenance.ts), so the agent treats it as data; and where the work happens.
import { PROVENANCE_NOTE, ProvenanceMarks } from '../../mcp/provenance';
import { markThread } from '../../mcp/tools/view-thread';

export type RelayThread = Parameters<typeof markThread>[1];

/** Paths a handoff names (artifacts, target files, the declared repo): what picks the working directory. */
export function pathsOf(thread: RelayThread): string[] {
  const paths: string[] = [];
  for (const artifact of thread.artifacts ?? []) if (typeof artifact.path === 'string') paths.push(artifact.path);
  for (const file of thread.proposed_action?.target_files ?? []) paths.push(file);
  const project = thread.metadata?.project as { repo?: unknown } | undefined;
  if (project && typeof project.repo === 'string') paths.push(project.repo);
  return paths;
}

/** The local folder for a handoff: the config's repo whose `repos_owned` path the handoff names, else the default. */
export function workdirFor(
  thread: RelayThread,
  repos: Record<string, string>,
  fallback: string | undefined,
): string | null {
  const paths = pathsOf(thread);
  // The longest owned path that matches wins (apps/web/ over apps/).
  for (const repo of Object.keys(repos).sort((a, b) => b.length - a.length)) {
    const bare = repo.replace(/\/+$/, '');
    if (paths.some((p) => p === bare || p.startsWith(`${bare}/`) || p.startsWith(repo))) return repos[repo]!;
  }
  return fallback ?? null;
}

const fence = (value: unknown) => `\`\`\`json\n${JSON.stringify(value, null, 2)}\n\`\`\``;

/** The thread as Markdown for the agent; its own progress replies (the run's output) are left out. */
export function threadFile(input: {
  thread: RelayThread;
  runId: string;
  workdir: string;
  reportFile: string;
  marks?: ProvenanceMarks;
}): string {
  const marks = input.marks ?? new ProvenanceMarks();
  const t = markThread(marks, input.thread);
  const from = input.thread.sender.handle;
  const lines: string[] = [
    `# Handoff ${t.thread_id} from ${from} to ${input.thread.recipient.handle}`,
    '',
    `You are ${input.thread.recipient.handle}'s coding agent. ${input.thread.recipient.handle} handed you this handoff (intent: ${t.intent}) ` +
      `to work on in ${input.workdir} (run ${input.runId}). When you are done, write your final report for ${from} to ${input.reportFile} ` +
      '(or make it the last thing you print); exit 0 when the work is done and non-zero when it is not.',
    '',
    `${PROVENANCE_NOTE} This file's provenance_nonce is ${marks.nonce}.`,
    '',
    '## Summary',
    '',
    t.summary,
  ];
  if (t.question) lines.push('', '## Question', '', t.question);
  if (t.proposed_action) {
    const action = t.proposed_action;
    lines.push(
      '',
      '## Proposed action',
      '',
      action.description,
      '',
      '### Rationale',
      '',
      action.rationale,
      '',
      '### Target files',
      '',
      fence(action.target_files),
    );
    if (action.suggested_diff) lines.push('', '### Suggested diff', '', action.suggested_diff);
  }
  lines.push('', '## Artifacts', '', fence(t.artifacts), '', '## Metadata', '', fence(t.metadata));
  const messages = t.messages.filter(
    (m, i) => !['run_progress', 'run_ended'].includes(String(input.thread.messages[i]?.payload?.kind ?? '')),
  );
  if (messages.length > 0) {
    lines.push('', '## Messages');
    for (const m of messages) lines.push('', `### ${m.sequence_no}. ${m.from} · ${m.created_at}`, '', m.body);
  }
  return `${lines.join('\n')}\n`;
}

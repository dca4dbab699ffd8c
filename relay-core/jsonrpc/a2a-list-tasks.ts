// A2A v1.0 ListTasks on POST /a2a: every task the caller can see, through the indexed pages of store/thread-lists.ts.
// Not @a2a-js/sdk's listTasks: ListTasksRequest.fromJSON drops unknown keys and coerces values (includeArtifacts "yes" is true), its range errors name no field, and the rest is TaskStore.list, which would be listVisibleTasks below.
import { z } from 'zod';
import { A2A_V1_STATE } from '../domain/a2a-states';
import { THREAD_STATUSES, type ThreadStatus } from '../domain/schemas';
import { cursorPosition } from '../store/thread-lists';
import { v1DraftTask, v1Task } from './a2a-task';
import { ENVELOPE } from './envelope';
import type { Method } from './method';
import { parseParams, taskIdSchema } from './params';

/** ListTasksRequest.page_size: "If unspecified, at most 50 tasks will be returned. The minimum value is 1. The maximum value is 100." */
export const LIST_TASKS_PAGE = { default: 50, max: 100 } as const;

const V1_TASK_STATES = [
  'TASK_STATE_UNSPECIFIED',
  'TASK_STATE_SUBMITTED',
  'TASK_STATE_WORKING',
  'TASK_STATE_COMPLETED',
  'TASK_STATE_FAILED',
  'TASK_STATE_CANCELED',
  'TASK_STATE_INPUT_REQUIRED',
  'TASK_STATE_REJECTED',
  'TASK_STATE_AUTH_REQUIRED',
] as const;

const pageSizeError = `must be a whole number from 1 to ${LIST_TASKS_PAGE.max}`;

const listTasksParams = z
  .object({
    contextId: z.string().max(200, 'must be at most 200 characters').optional(),
    status: z.enum(V1_TASK_STATES, { error: `must be one of ${V1_TASK_STATES.join(', ')}` }).optional(),
    pageSize: z
      .number({ error: pageSizeError })
      .int(pageSizeError)
      .min(1, pageSizeError)
      .max(LIST_TASKS_PAGE.max, pageSizeError)
      .optional(),
    pageToken: z
      .string({ error: 'must be a string' })
      .max(200, 'not a page token this relay issued (pass nextPageToken as ListTasks answered it)')
      .refine(
        (token) => token === '' || cursorPosition(token) !== undefined,
        'not a page token this relay issued (pass nextPageToken as ListTasks answered it)',
      )
      .optional(),
    historyLength: z
      .number({ error: 'must be a whole number, 0 or more' })
      .int('must be a whole number, 0 or more')
      .min(0, 'must be a whole number, 0 or more')
      .optional(),
    statusTimestampAfter: z.iso
      .datetime({ offset: true, error: 'must be an ISO 8601 timestamp, like 2026-01-31T09:00:00Z' })
      .optional(),
    includeArtifacts: z.boolean({ error: 'must be true or false' }).optional(),
    tenant: z.string().optional(),
    ...ENVELOPE,
  })
  .strict();

/** The thread statuses a v1.0 state stands for (A2A_V1_STATE read backwards); no handoff is ever failed or waiting for input. */
function statusesOf(state: string): ThreadStatus[] {
  return THREAD_STATUSES.filter((status) => A2A_V1_STATE[status] === state);
}

/** The statuses of tasks waiting for a recipient a v1.0 state stands for (a2a-task.ts draftOutTask spells them). */
function draftStatusesOf(state: string | undefined): Array<'input_required' | 'cancelled'> {
  if (state === undefined) return ['input_required', 'cancelled'];
  return state === 'TASK_STATE_INPUT_REQUIRED'
    ? ['input_required']
    : state === 'TASK_STATE_CANCELED'
      ? ['cancelled']
      : [];
}

/**
 * → ListTasksResponse `{ tasks, nextPageToken, pageSize, totalSize }`: the caller's sent, received and offered tasks
 * and their own tasks still waiting for a recipient,
 * newest first, narrowed by contextId (a context is one thread), status and statusTimestampAfter; `nextPageToken` is
 * "" on the last page, `pageSize` the number of tasks in this one, `totalSize` how many match in all.
 */
export const listTasks: Method = async (ctx, params) => {
  const p = parseParams(listTasksParams, params);
  const state = p.status === undefined || p.status === 'TASK_STATE_UNSPECIFIED' ? undefined : p.status;
  const statuses = state === undefined ? undefined : statusesOf(state);
  const draftStatuses = draftStatusesOf(state);
  const contextId = p.contextId || undefined;
  // A state no task is ever in, or a context id that cannot be a task's, matches nothing.
  if (
    (statuses?.length === 0 && draftStatuses.length === 0) ||
    (contextId !== undefined && !taskIdSchema.safeParse(contextId).success)
  ) {
    return { tasks: [], nextPageToken: '', pageSize: 0, totalSize: 0 };
  }
  const page = await ctx.reads.listVisibleTasks(ctx.caller, {
    draftStatuses,
    limit: p.pageSize ?? LIST_TASKS_PAGE.default,
    ...(statuses ? { statuses } : {}),
    ...(p.statusTimestampAfter ? { statusSince: new Date(p.statusTimestampAfter) } : {}),
    ...(contextId ? { threadId: contextId } : {}),
    ...(p.pageToken ? { cursor: p.pageToken } : {}),
  });
  const tasks = page.items.map((item) => {
    // Artifacts only when asked for (then always there, if empty); history as historyLength says, like GetTask.
    const { artifacts, ...task } =
      'view' in item ? v1Task(item.view, p.historyLength) : v1DraftTask(item.draft, p.historyLength);
    return p.includeArtifacts ? { ...task, artifacts: artifacts ?? [] } : task;
  });
  return { tasks, nextPageToken: page.next_cursor ?? '', pageSize: tasks.length, totalSize: page.total };
};

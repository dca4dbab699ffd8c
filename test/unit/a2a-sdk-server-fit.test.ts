// Why POST /a2a does not run on @a2a-js/sdk's server: each reason written at the top of relay-core/jsonrpc's A2A files
// (a2a-*.ts, agent-card.ts), shown against the installed SDK, so that an upgrade that removes one fails here and names
// the method that could move onto it.
import type { AddressInfo } from 'node:net';
import express from 'express';
import { AgentCard, ListTasksRequest, Task, TaskPushNotificationConfig, TaskState } from '@a2a-js/sdk';
import { JsonRpcTaskNotFoundError, JsonRpcTransportError, TaskNotFoundError } from '@a2a-js/sdk/errors';
import {
  DefaultRequestHandler,
  JsonRpcTransportHandler,
  ServerCallContext,
  type A2ARequestHandler,
  type AgentExecutor,
  type TaskStore,
} from '@a2a-js/sdk/server';
import { agentCardHandler } from '@a2a-js/sdk/server/express';
import { agentCard } from '../../relay-core/jsonrpc/agent-card';

const card = AgentCard.fromJSON(agentCard({ publicUrl: 'http://relay.test', version: '0.0.0' }));
const TASK_ID = '00000000-0000-4000-8000-000000000001';

/** A submitted task, as the relay's store would hand it to the SDK. */
function submittedTask(): Task {
  return Task.fromJSON({
    id: TASK_ID,
    contextId: TASK_ID,
    status: { state: 'TASK_STATE_SUBMITTED', timestamp: '2026-12-05T00:00:00.000Z' },
    history: [{ messageId: 'm1', role: 'ROLE_USER', parts: [{ text: 'hello' }] }],
  });
}

/** A TaskStore holding the relay's one task and whatever the SDK saves, by id. */
function taskStore(): TaskStore & { saved: Task[] } {
  const saved: Task[] = [];
  const tasks = new Map<string, Task>([[TASK_ID, submittedTask()]]);
  return {
    saved,
    async load(id) {
      const task = tasks.get(id);
      return task && structuredClone(task);
    },
    async save(task) {
      saved.push(structuredClone(task));
      tasks.set(task.id, structuredClone(task));
    },
    async list() {
      return { tasks: [], nextPageToken: '', pageSize: 0, totalSize: 0 };
    },
  };
}

const idleExecutor = (calls: string[] = []): AgentExecutor => ({
  async execute() {
    calls.push('execute');
  },
  async cancelTask() {
    calls.push('cancelTask');
  },
});

const context = () => new ServerCallContext({ requestedVersion: '1.0' });

// The SDK logs the executor failures and unknown tasks these tests provoke on purpose.
beforeEach(() => {
  jest.spyOn(console, 'error').mockImplementation(() => {});
  jest.spyOn(console, 'warn').mockImplementation(() => {});
});
afterEach(() => jest.restoreAllMocks());

test("a2a-errors.ts: JsonRpcTransportHandler drops an error's own data: never WIRE.md's data { code, request_id }", async () => {
  const data = { code: 'thread_not_found', request_id: 'req-1' };
  const thrown = [
    new JsonRpcTaskNotFoundError({ message: 'No task x', data: data as never }),
    new JsonRpcTransportError({ jsonrpc: '2.0', id: 1, error: { code: -32001, message: 'No task x', data } }),
  ];
  class Relay extends JsonRpcTransportHandler {
    // Its type already says data is ErrorDetail[]; and handle() never calls the override.
    static override mapToJSONRPCError() {
      return { code: -32001, message: 'No task x', data: data as never };
    }
  }
  for (const error of thrown) {
    const handler = { getTask: async () => Promise.reject(error) } as unknown as A2ARequestHandler;
    for (const transport of [new JsonRpcTransportHandler(handler), new Relay(handler)]) {
      const answer = (await transport.handle(
        { jsonrpc: '2.0', id: 1, method: 'GetTask', params: { id: 'x' } },
        context(),
      )) as { error: { code: number; data?: unknown } };
      expect(answer.error.code).toBe(-32001);
      expect(answer.error.data).not.toEqual(data);
      expect(answer.error.data === undefined || Array.isArray(answer.error.data)).toBe(true);
    }
  }
});

test('a2a-methods.ts: SendMessage answers an executor error as a FAILED task, not as an error', async () => {
  const store = taskStore();
  const executor: AgentExecutor = {
    async execute() {
      throw new Error('params.message.metadata.intent: required');
    },
    async cancelTask() {},
  };
  const handler = new DefaultRequestHandler(card, store, executor);
  const result = await handler.sendMessage(
    { tenant: '', message: { ...submittedTask().history[0]!, taskId: '', contextId: '' } } as never,
    context(),
  );
  expect(result).toMatchObject({ status: { state: TaskState.TASK_STATE_FAILED } });
  expect(store.saved.length).toBeGreaterThan(0);
});

test('a2a-methods.ts: CancelTask with no in-process event bus saves a CANCELED copy and never asks the executor', async () => {
  const store = taskStore();
  const calls: string[] = [];
  const handler = new DefaultRequestHandler(card, store, idleExecutor(calls));
  const task = await handler.cancelTask({ tenant: '', id: TASK_ID, metadata: { reason: 'why' } }, context());
  expect(task.status?.state).toBe(TaskState.TASK_STATE_CANCELED);
  expect(calls).toEqual([]);
  const saved = store.saved.at(-1)?.status;
  expect(saved?.state).toBe(TaskState.TASK_STATE_CANCELED);
  // The caller's reason is not what the task says.
  expect(saved?.message?.parts[0]?.content).toEqual({ $case: 'text', value: 'Task cancellation requested by user.' });
});

test('a2a-streaming.ts: SubscribeToTask with no in-process event bus sends the task and ends, though it is not finished', async () => {
  const handler = new DefaultRequestHandler(card, taskStore(), idleExecutor());
  const events = [];
  for await (const event of handler.resubscribe({ tenant: '', id: TASK_ID }, context())) events.push(event);
  expect(events).toHaveLength(1);
  expect(events[0]!.payload).toMatchObject({
    $case: 'task',
    value: { status: { state: TaskState.TASK_STATE_SUBMITTED } },
  });
});

test("a2a-push.ts: another participant's Get of a config is TaskNotFoundError, and toJSON drops signing_secret", async () => {
  const handler = new DefaultRequestHandler(card, taskStore(), idleExecutor());
  await expect(
    handler.getTaskPushNotificationConfig({ tenant: '', taskId: TASK_ID, id: 'mine' }, context()),
  ).rejects.toBeInstanceOf(TaskNotFoundError);
  const created = { ...TaskPushNotificationConfig.fromJSON({ taskId: TASK_ID, id: 'a', url: 'https://x.test/' }) };
  expect(TaskPushNotificationConfig.toJSON({ ...created, signing_secret: 's' } as never)).not.toHaveProperty(
    'signing_secret',
  );
});

test('a2a-list-tasks.ts: ListTasksRequest.fromJSON drops unknown keys and coerces, and the range error names no field', async () => {
  expect(ListTasksRequest.fromJSON({ includeArtifacts: 'yes', limit: 5 })).toMatchObject({ includeArtifacts: true });
  expect(ListTasksRequest.fromJSON({ limit: 5 })).not.toHaveProperty('limit');
  const handler = new DefaultRequestHandler(card, taskStore(), idleExecutor());
  await expect(handler.listTasks(ListTasksRequest.fromJSON({ pageSize: 0 }), context())).rejects.toThrow(
    /^pageSize must be between 1 and 100$/,
  );
});

test('agent-card.ts: agentCardHandler with v0.3 compat serves the v0.3 card when A2A-Version is absent', async () => {
  const app = express().use(
    '/card',
    agentCardHandler({ agentCardProvider: async () => card, legacyCompat: { enabled: true } } as never),
  );
  const server = app.listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  try {
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/card`;
    const absent = await (await fetch(base)).json();
    expect(absent.protocolVersion).toBe('0.3');
    expect(absent.securitySchemes.bearer).toMatchObject({ type: 'http' });
    expect(absent.securitySchemes.bearer).not.toHaveProperty('httpAuthSecurityScheme');
  } finally {
    await new Promise((resolve) => server.close(resolve));
  }
});

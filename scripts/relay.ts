// Composition root: wires store, queues, service, HTTP app, Slack and workers for the roles asked for.
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Logger } from 'pino';
import { createSlackApp, slackWebClient } from '../bot/slack-app';
import { createSlackDeliveryProcessor } from '../bot/slack-delivery';
import { BullmqEventPublisher, redisConnection, startWorker, type RunningWorker } from '../relay-core/bullmq-queues';
import type { RelayConfig } from '../relay-core/config';
import { createHttpApp, finishHttpApp } from '../relay-core/http-app';
import { mountMcpHttp } from '../mcp/http-mount';
import { MongoStore } from '../relay-core/mongo-store';
import { redisRateLimiter } from '../relay-core/rate-limiter';
import { RelayService } from '../relay-core/relay-service';
import { Teammates } from '../relay-core/teammates';

export interface RunningRelay {
  url: string;
  relay: RelayService;
  store: MongoStore;
  stop(): Promise<void>;
}

export interface StartRelayOptions {
  config: RelayConfig & { mongodbUrl: string; adminKey: string; keyPepper: string };
  log: Logger;
  /** How often the worker role re-enqueues events that missed their queue (ms). */
  sweepIntervalMs?: number;
}

export async function startRelay({ config, log, sweepIntervalMs = 5_000 }: StartRelayOptions): Promise<RunningRelay> {
  const store = await MongoStore.connect(config.mongodbUrl, config.mongodbDb);
  await store.ensureIndexes();
  const producer = redisConnection(config.redisUrl, 'producer');
  producer.on('error', () => {
    // ioredis reconnects by itself; a failed publish is swept later.
  });
  const publisher = new BullmqEventPublisher({ connection: producer, prefix: config.queuePrefix, slackEnabled: Boolean(config.slack) });
  const teammates = new Teammates({ store, keyPepper: config.keyPepper, log });
  const relay = new RelayService({ store, teammates, events: publisher, publicUrl: config.publicUrl, log, tokenSecret: config.keyPepper });

  const roles = new Set(config.roles);
  const workers: RunningWorker[] = [];
  let sweepTimer: NodeJS.Timeout | undefined;
  if (roles.has('worker')) {
    if (config.slack) {
      const processor = createSlackDeliveryProcessor({ relay, client: slackWebClient(config.slack), log });
      workers.push(
        startWorker({
          name: 'slack',
          redisUrl: config.redisUrl,
          prefix: config.queuePrefix,
          processor,
          onFailed: (job, error) => log.warn({ job_id: job?.id, thread_id: job?.data?.thread_id, err: error.message }, 'slack delivery attempt failed'),
        }),
      );
    }
    const sweep = () =>
      relay.sweepOutbox(sweepIntervalMs).catch((error: Error) => log.warn({ err: error.message }, 'outbox sweep failed'));
    void sweep();
    sweepTimer = setInterval(sweep, sweepIntervalMs);
    sweepTimer.unref();
  }

  let server: Server | undefined;
  let url = '';
  let slackApp: ReturnType<typeof createSlackApp> | undefined;
  if (roles.has('api') || roles.has('bot')) {
    const rateLimiter = redisRateLimiter({ redis: producer, prefix: config.queuePrefix, points: config.rateLimitPerMinute, durationSeconds: 60 });
    const httpApp = createHttpApp({
      relay,
      adminKey: config.adminKey,
      rateLimiter,
      log,
      readiness: {
        mongodb: () => store.ping(),
        redis: async () => {
          await producer.ping();
        },
      },
    });
    if (roles.has('bot') && config.slack) slackApp = createSlackApp({ config: config.slack, relay, httpApp, log });
    if (roles.has('api')) mountMcpHttp(httpApp, { relay, rateLimiter });
    finishHttpApp(httpApp, log);
    server = await new Promise<Server>((resolve, reject) => {
      const s = httpApp.listen(config.port, config.host, () => resolve(s));
      s.once('error', reject);
    });
    // Socket Mode: connect out to Slack now (HTTP mode is served by the listening server above).
    if (slackApp && config.slack?.appToken) await slackApp.start();
    const address = server.address() as AddressInfo;
    url = `http://${address.family === 'IPv6' ? `[${address.address}]` : address.address}:${address.port}`;
  }

  return {
    url,
    relay,
    store,
    async stop() {
      if (sweepTimer) clearInterval(sweepTimer);
      if (slackApp && config.slack?.appToken) await slackApp.stop();
      if (server) {
        server.closeIdleConnections();
        await new Promise<void>((resolve) => server!.close(() => resolve()));
      }
      await Promise.all(workers.map((w) => w.close()));
      await publisher.close();
      producer.disconnect();
      await store.close();
    },
  };
}

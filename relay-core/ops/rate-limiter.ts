// Per-teammate limits on mutating calls, and per-address limits on the one route that takes no key (an invitation's
// redemption), shared by every relay process through Redis.
import type { Redis } from 'ioredis';
import { RateLimiterMemory, RateLimiterRedis, RateLimiterRes } from 'rate-limiter-flexible';
import { RelayError } from '../domain/errors';

export interface RateLimiter {
  /** Counts one call for the key; throws rate_limited (with retry_after_ms) past the limit. */
  consume(key: string): Promise<void>;
}

export function redisRateLimiter(opts: {
  redis: Redis;
  prefix: string;
  points: number;
  durationSeconds: number;
  /** What is counted, for the refusal: `changes from <key>` unless said. */
  counted?: (key: string) => string;
}): RateLimiter {
  const counted = opts.counted ?? ((key: string) => `changes from ${key}`);
  const limiter = new RateLimiterRedis({
    storeClient: opts.redis,
    keyPrefix: `${opts.prefix}:ratelimit`,
    points: opts.points,
    duration: opts.durationSeconds,
    // While Redis is down each process limits on its own rather than refusing every call.
    insuranceLimiter: new RateLimiterMemory({ points: opts.points, duration: opts.durationSeconds }),
  });
  return {
    async consume(key) {
      try {
        await limiter.consume(key);
      } catch (rejection) {
        if (rejection instanceof RateLimiterRes) {
          throw new RelayError(
            'rate_limited',
            `Too many ${counted(key)}: at most ${opts.points} per ${opts.durationSeconds} s; try again in ${Math.ceil(rejection.msBeforeNext / 1_000)} s`,
            {
              retry_after_ms: rejection.msBeforeNext,
            },
          );
        }
        throw rejection;
      }
    },
  };
}

/** Counts one call for `key` in a rule's bucket; the wait before the next allowed call when over `max`, else null. */
export interface PolicyLimiter {
  consume(bucket: string, key: string, max: number, windowMs: number): Promise<{ retry_after_ms: number } | null>;
}

/** The policy's rate limits: one limiter per rule bucket and size, shared by every relay process through Redis. */
export function redisPolicyLimiter(opts: { redis: Redis; prefix: string }): PolicyLimiter {
  const limiters = new Map<string, RateLimiterRedis>();
  const limiterFor = (bucket: string, max: number, windowMs: number) => {
    const seconds = Math.max(1, Math.ceil(windowMs / 1_000));
    const id = `${bucket}:${max}:${seconds}`;
    let limiter = limiters.get(id);
    if (!limiter) {
      limiter = new RateLimiterRedis({
        storeClient: opts.redis,
        keyPrefix: `${opts.prefix}:${id}`,
        points: max,
        duration: seconds,
        insuranceLimiter: new RateLimiterMemory({ points: max, duration: seconds }),
      });
      limiters.set(id, limiter);
    }
    return limiter;
  };
  return {
    async consume(bucket, key, max, windowMs) {
      try {
        await limiterFor(bucket, max, windowMs).consume(key);
        return null;
      } catch (rejection) {
        if (rejection instanceof RateLimiterRes) return { retry_after_ms: rejection.msBeforeNext };
        throw rejection;
      }
    },
  };
}

// Per-teammate limits on mutating calls, shared by every relay process through Redis.
import type { Redis } from 'ioredis';
import { RateLimiterMemory, RateLimiterRedis, RateLimiterRes } from 'rate-limiter-flexible';
import { RelayError } from '../domain/errors';

export interface RateLimiter {
  /** Counts one call for the key; throws rate_limited (with retry_after_ms) past the limit. */
  consume(key: string): Promise<void>;
}

export function redisRateLimiter(opts: { redis: Redis; prefix: string; points: number; durationSeconds: number }): RateLimiter {
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
          throw new RelayError('rate_limited', `Too many changes from ${key}: at most ${opts.points} per ${opts.durationSeconds} s`, {
            retry_after_ms: rejection.msBeforeNext,
          });
        }
        throw rejection;
      }
    },
  };
}

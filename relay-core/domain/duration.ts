// Durations as people write them in settings, policies and the runner's config (`500ms`, `30s`, `4h`, `3d`, `2w`):
// one parser for all of them, `ms`'s, each caller giving the range it accepts and the message a bad value gets.
import ms from 'ms';
import { z } from 'zod';

export interface DurationRange {
  /** The least and most accepted, in milliseconds (both included). */
  min: number;
  max: number;
  /**
   * A bare number is milliseconds (`250`). Off unless a setting documents it: elsewhere `"30"` is refused rather
   * than read as 30 ms when 30 s or 30 min was meant.
   */
  bareMs?: boolean;
}

/**
 * `500ms`, `30s`, `10m`, `4h`, `3d`, `2w`, and `ms`'s other spellings (`1.5h`, `2 days`, `90 minutes`) → whole
 * milliseconds; null when malformed, negative, or outside `range`.
 */
export function parseDuration(text: string, range: DurationRange): number | null {
  const trimmed = text.trim();
  if (!trimmed || (!range.bareMs && /^[\d.]+$/.test(trimmed))) return null;
  const value = ms(trimmed as ms.StringValue) as number | undefined;
  if (value === undefined || !Number.isFinite(value)) return null;
  const rounded = Math.round(value);
  return rounded >= range.min && rounded <= range.max ? rounded : null;
}

/**
 * A zod string → milliseconds; a bad value fails with `message` (the edge names the setting: the variable, the
 * policy's line and field, the config file's field). `fallback` is the value when the setting is absent.
 */
export function durationSchema(range: DurationRange & { message: (value: string) => string }, fallback?: string) {
  const toMs = (value: string, ctx: z.RefinementCtx) => {
    const parsed = parseDuration(value, range);
    if (parsed === null) {
      ctx.addIssue({ code: 'custom', message: range.message(value) });
      return z.NEVER;
    }
    return parsed;
  };
  return fallback === undefined ? z.string().transform(toMs) : z.string().default(fallback).transform(toMs);
}

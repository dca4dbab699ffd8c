// Structured logs (pino): one JSON line per event, secrets never included (keys are logged by id only).
import pino, { type Logger } from 'pino';

export function createLogger(level: 'debug' | 'info' | 'warn' | 'error' | 'silent', destination: 1 | 2 = 1): Logger {
  return pino(
    {
      level,
      base: { service: 'handoff-relay' },
      redact: { paths: ['api_key', '*.api_key', 'authorization', '*.authorization', 'token', '*.token'], censor: '[redacted]' },
    },
    pino.destination({ fd: destination, sync: false }),
  );
}

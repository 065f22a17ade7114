import { pino } from 'pino';
import type { Logger } from 'pino';

/** Structured JSON lines on stdout; level from HUB_LOG_LEVEL. */
export function createLogger(level: string): Logger {
  return pino({ level, base: { service: 'hub' } });
}

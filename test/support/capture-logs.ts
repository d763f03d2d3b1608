import { Logger, type LoggerService } from '@nestjs/common';

/** Collects what the library logs, to check warnings (and what they must never contain). */
export function captureLogs(): { lines: string[]; restore: () => void } {
  const lines: string[] = [];
  const sink = (level: string) => (message: unknown) => void lines.push(`${level} ${String(message)}`);
  const logger: LoggerService = { log: sink('log'), warn: sink('warn'), error: sink('error'), debug: sink('debug'), verbose: sink('verbose') };
  Logger.overrideLogger(logger);
  return { lines, restore: () => Logger.overrideLogger(new Logger()) };
}

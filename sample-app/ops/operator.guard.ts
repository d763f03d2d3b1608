import { type CanActivate, type ExecutionContext, Injectable, UnauthorizedException } from '@nestjs/common';
import { timingSafeEqual } from 'node:crypto';
import { SampleConfig } from '../sample.config';

interface OperatorRequest {
  headers: Record<string, string | string[] | undefined>;
  socket?: { remoteAddress?: string };
}

const LOOPBACK = /^(127\.\d+\.\d+\.\d+|::1|::ffff:127\.\d+\.\d+\.\d+)$/;

/**
 * Who may open the queue dashboard: requests from this machine only, and, when
 * DASHBOARD_PASSWORD is set, with HTTP Basic credentials `operator:<password>` (the browser
 * asks for them). A real app would check its own operators' sessions or SSO here.
 */
@Injectable()
export class OperatorGuard implements CanActivate {
  constructor(private readonly config: SampleConfig) {}

  canActivate(context: ExecutionContext): boolean {
    const http = context.switchToHttp();
    const request = http.getRequest<OperatorRequest>();
    if (!LOOPBACK.test(request.socket?.remoteAddress ?? '')) return false;
    const password = this.config.dashboardPassword;
    if (!password) return true;
    const expected = Buffer.from(`Basic ${Buffer.from(`operator:${password}`).toString('base64')}`);
    const sent = Buffer.from(String(request.headers.authorization ?? ''));
    if (sent.length === expected.length && timingSafeEqual(sent, expected)) return true;
    http
      .getResponse<{ header(name: string, value: string): unknown }>()
      .header('WWW-Authenticate', 'Basic realm="queues"');
    throw new UnauthorizedException();
  }
}

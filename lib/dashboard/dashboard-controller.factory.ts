import {
  Body,
  Controller,
  Get,
  Header,
  HttpCode,
  Inject,
  NotFoundException,
  Param,
  Post,
  Query,
  Req,
  Res,
  UseGuards,
  type CanActivate,
  type Type,
} from '@nestjs/common';
import { assertSameSite, csrfCookie, csrfTokenOf, newCsrfToken, type HeaderBag } from './dashboard-csrf';
import { toHttpException } from './dashboard-errors';
import { deadSelectionOf, pageOf, searchOf, stateOf } from './dashboard-input';
import { CONTENT_SECURITY_POLICY } from './dashboard-page';
import { DASHBOARD, type Dashboard } from './dashboard';

/** The reply as Express and Fastify both give it: only `header` is used. */
interface HeaderSink {
  header(name: string, value: string): unknown;
}

/** The request's path, without its query and trailing slash: where the page is, whatever the app's prefix. */
function basePath(request: HeaderBag & { originalUrl?: string; url?: string }): string {
  return (request.originalUrl ?? request.url ?? '').split('?')[0].replace(/\/+$/, '');
}

/** Runs one API call; the library's errors become JSON answers with a fitting status. */
async function answer<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    throw toHttpException(error);
  }
}

/** The dashboard's controller at `path`, behind `guards`: the page, its assets, its JSON API. */
export function dashboardController(path: string, guards: (Type<CanActivate> | CanActivate)[]): Type<unknown> {
  @Controller(path)
  @UseGuards(...guards)
  class RedisAckQueueDashboardController {
    constructor(@Inject(DASHBOARD) private readonly dashboard: Dashboard) {}

    @Get()
    @Header('Content-Type', 'text/html; charset=utf-8')
    @Header('Content-Security-Policy', CONTENT_SECURITY_POLICY)
    @Header('Cache-Control', 'no-store')
    @Header('X-Content-Type-Options', 'nosniff')
    @Header('Referrer-Policy', 'same-origin')
    page(@Req() request: HeaderBag, @Res({ passthrough: true }) reply: HeaderSink): string {
      const base = basePath(request);
      const csrf = csrfTokenOf(request) ?? newCsrfToken();
      reply.header('Set-Cookie', csrfCookie(csrf, base));
      return this.dashboard.page.render({ base, csrf, ...this.dashboard.settings });
    }

    @Get('assets/:file')
    @Header('Cache-Control', 'no-cache')
    @Header('X-Content-Type-Options', 'nosniff')
    asset(@Param('file') file: string, @Res({ passthrough: true }) reply: HeaderSink): string {
      const asset = this.dashboard.page.asset(file);
      if (!asset) throw new NotFoundException();
      reply.header('Content-Type', asset.type);
      return asset.body;
    }

    @Get('api/topics')
    @Header('Cache-Control', 'no-store')
    topics(@Query() query: Record<string, unknown>) {
      return answer(async () => {
        const page = pageOf(query);
        return { ...page, ...(await this.dashboard.reads.topics(searchOf(query.search), page)) };
      });
    }

    @Get('api/topics/:topic')
    @Header('Cache-Control', 'no-store')
    topic(@Param('topic') topic: string) {
      return answer(() => this.dashboard.reads.topic(topic));
    }

    @Get('api/topics/:topic/messages')
    @Header('Cache-Control', 'no-store')
    messages(@Param('topic') topic: string, @Query() query: Record<string, unknown>) {
      return answer(() => this.dashboard.reads.messages(topic, stateOf(query.state), pageOf(query)));
    }

    @Get('api/topics/:topic/messages/:id')
    @Header('Cache-Control', 'no-store')
    message(@Param('topic') topic: string, @Param('id') id: string) {
      return answer(() => this.dashboard.reads.message(topic, id));
    }

    @Post('api/topics/:topic/dead/:action')
    @HttpCode(200)
    sweepDead(
      @Req() request: HeaderBag,
      @Param('topic') topic: string,
      @Param('action') action: string,
      @Body() body: unknown,
    ) {
      return this.act<object>(request, () => {
        if (action !== 'requeue' && action !== 'purge') throw new NotFoundException();
        const ids = deadSelectionOf(body);
        const { actions } = this.dashboard;
        return action === 'requeue' ? actions.requeue(topic, ids) : actions.purge(topic, ids);
      });
    }

    @Post('api/topics/:topic/messages/:id/cancel')
    @HttpCode(200)
    cancel(@Req() request: HeaderBag, @Param('topic') topic: string, @Param('id') id: string) {
      return this.act(request, () => this.dashboard.actions.cancel(topic, id));
    }

    @Post('api/topics/:topic/:change')
    @HttpCode(200)
    pause(@Req() request: HeaderBag, @Param('topic') topic: string, @Param('change') change: string) {
      return this.act(request, () => {
        if (change !== 'pause' && change !== 'resume') throw new NotFoundException();
        return this.dashboard.actions.setPaused(topic, change === 'pause');
      });
    }

    @Post('api/topics/:topic/schedules/:name/run')
    @HttpCode(200)
    runSchedule(@Req() request: HeaderBag, @Param('topic') topic: string, @Param('name') name: string) {
      return this.act(request, () => this.dashboard.actions.runSchedule(topic, name));
    }

    /** A mutating call: refused unless it comes from the dashboard's own page. */
    private act<T>(request: HeaderBag, work: () => Promise<T>): Promise<T> {
      return answer(() => {
        assertSameSite(request);
        return work();
      });
    }
  }
  return RedisAckQueueDashboardController;
}

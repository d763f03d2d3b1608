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
import { deadSelectionOf, nameOf, pageOf, searchOf, stateOf } from './dashboard-input';
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

    // A topic, message id or schedule name travels in the query, never in the path: URLs drop
    // a path step named `.` or `..` (even percent-encoded), and both are valid names.
    @Get('api/topic')
    @Header('Cache-Control', 'no-store')
    topic(@Query() query: Record<string, unknown>) {
      return answer(() => this.dashboard.reads.topic(nameOf(query, 'topic')));
    }

    @Get('api/messages')
    @Header('Cache-Control', 'no-store')
    messages(@Query() query: Record<string, unknown>) {
      return answer(() => this.dashboard.reads.messages(nameOf(query, 'topic'), stateOf(query.state), pageOf(query)));
    }

    @Get('api/message')
    @Header('Cache-Control', 'no-store')
    message(@Query() query: Record<string, unknown>) {
      return answer(() => this.dashboard.reads.message(nameOf(query, 'topic'), nameOf(query, 'id')));
    }

    @Post('api/dead/:action')
    @HttpCode(200)
    sweepDead(
      @Req() request: HeaderBag,
      @Param('action') action: string,
      @Query() query: Record<string, unknown>,
      @Body() body: unknown,
    ) {
      return this.act<object>(request, () => {
        if (action !== 'requeue' && action !== 'purge') throw new NotFoundException();
        const topic = nameOf(query, 'topic');
        const ids = deadSelectionOf(body);
        const { actions } = this.dashboard;
        return action === 'requeue' ? actions.requeue(topic, ids) : actions.purge(topic, ids);
      });
    }

    @Post('api/cancel')
    @HttpCode(200)
    cancel(@Req() request: HeaderBag, @Query() query: Record<string, unknown>) {
      return this.act(request, () => this.dashboard.actions.cancel(nameOf(query, 'topic'), nameOf(query, 'id')));
    }

    @Post('api/pause')
    @HttpCode(200)
    pause(@Req() request: HeaderBag, @Query() query: Record<string, unknown>) {
      return this.act(request, () => this.dashboard.actions.setPaused(nameOf(query, 'topic'), true));
    }

    @Post('api/resume')
    @HttpCode(200)
    resume(@Req() request: HeaderBag, @Query() query: Record<string, unknown>) {
      return this.act(request, () => this.dashboard.actions.setPaused(nameOf(query, 'topic'), false));
    }

    @Post('api/run')
    @HttpCode(200)
    runSchedule(@Req() request: HeaderBag, @Query() query: Record<string, unknown>) {
      return this.act(request, () =>
        this.dashboard.actions.runSchedule(nameOf(query, 'topic'), nameOf(query, 'schedule')),
      );
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

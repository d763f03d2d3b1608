import {
  Body,
  Controller,
  createParamDecorator,
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
  type ExecutionContext,
  type Type,
} from '@nestjs/common';
import { assertSameSite, csrfCookie, csrfTokenOf, newCsrfToken, type HeaderBag } from './dashboard-csrf';
import { RedisAckQueueRouteOf } from '../nest/redis-ack-queue-route';
import { bulkOf } from './dashboard-bulk-input';
import { toHttpException } from './dashboard-errors';
import { deadSelectionOf, flowBudgetOf, historyOf, nameOf, pageOf, searchOf, stateOf, tagOf } from './dashboard-input';
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

/**
 * The names a call is about (`topic`, `id`, `schedule`) with the rest of its query: the query's
 * own, or on the older path routes (`api/topics/:topic/...`) the path's, which win. Both forms
 * reach the same handler with the same input.
 */
const ApiInput = createParamDecorator((_: unknown, context: ExecutionContext): Record<string, unknown> => {
  const { query, params } = context.switchToHttp().getRequest<{ query?: object; params?: object }>();
  return { ...query, ...params };
});

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
  @RedisAckQueueRouteOf('dashboard')
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

    // A topic, message id or schedule name travels in the query: URLs drop a path step named `.`
    // or `..` (even percent-encoded), and both are valid names. Each handler also answers the
    // older path route it replaces, which keeps working for every other name.
    @Get(['api/topic', 'api/topics/:topic'])
    @Header('Cache-Control', 'no-store')
    topic(@ApiInput() input: Record<string, unknown>) {
      return answer(() => this.dashboard.reads.topic(nameOf(input, 'topic')));
    }

    @Get(['api/messages', 'api/topics/:topic/messages'])
    @Header('Cache-Control', 'no-store')
    messages(@ApiInput() input: Record<string, unknown>) {
      return answer(() =>
        this.dashboard.reads.messages(nameOf(input, 'topic'), stateOf(input.state), pageOf(input), tagOf(input.tag)),
      );
    }

    @Get('api/count')
    @Header('Cache-Control', 'no-store')
    count(@ApiInput() input: Record<string, unknown>) {
      return answer(() => this.dashboard.reads.count(nameOf(input, 'topic'), stateOf(input.state), tagOf(input.tag)));
    }

    @Get(['api/message', 'api/topics/:topic/messages/:id'])
    @Header('Cache-Control', 'no-store')
    message(@ApiInput() input: Record<string, unknown>) {
      return answer(() => this.dashboard.reads.message(nameOf(input, 'topic'), nameOf(input, 'id')));
    }

    @Get('api/flow')
    @Header('Cache-Control', 'no-store')
    flow(@ApiInput() input: Record<string, unknown>) {
      return answer(() => this.dashboard.reads.flow(nameOf(input, 'topic'), nameOf(input, 'id'), flowBudgetOf(input)));
    }

    @Get('api/history')
    @Header('Cache-Control', 'no-store')
    history(@ApiInput() input: Record<string, unknown>) {
      return answer(() => this.dashboard.reads.history(nameOf(input, 'topic'), historyOf(input)));
    }

    @Get('api/scaling')
    @Header('Cache-Control', 'no-store')
    scaling(@ApiInput() input: Record<string, unknown>) {
      return answer(() => this.dashboard.reads.scaling(nameOf(input, 'topic')));
    }

    @Get('api/group-usage')
    @Header('Cache-Control', 'no-store')
    groupUsage(@ApiInput() input: Record<string, unknown>) {
      return answer(() => this.dashboard.reads.groupUsage(nameOf(input, 'topic')));
    }

    @Get('api/outbox')
    @Header('Cache-Control', 'no-store')
    outbox() {
      return answer(() => this.dashboard.reads.outbox());
    }

    // The outbox's dead rows: `{ ids: [row ids] }` or `{ all: true }`, as the dead letters' sweep.
    @Post('api/outbox/:action')
    @HttpCode(200)
    sweepOutbox(@Req() request: HeaderBag, @Param('action') action: string, @Body() body: unknown) {
      return this.act<object>(request, () => {
        if (action !== 'requeue' && action !== 'purge') throw new NotFoundException();
        const rowIds = deadSelectionOf(body);
        const { actions } = this.dashboard;
        return action === 'requeue' ? actions.requeueOutbox(rowIds) : actions.purgeOutbox(rowIds);
      });
    }

    @Post(['api/dead/:action', 'api/topics/:topic/dead/:action'])
    @HttpCode(200)
    sweepDead(@Req() request: HeaderBag, @ApiInput() input: Record<string, unknown>, @Body() body: unknown) {
      return this.act<object>(request, () => {
        const { action } = input;
        if (action !== 'requeue' && action !== 'purge') throw new NotFoundException();
        const topic = nameOf(input, 'topic');
        const ids = deadSelectionOf(body);
        const { actions } = this.dashboard;
        return action === 'requeue' ? actions.requeue(topic, ids) : actions.purge(topic, ids);
      });
    }

    @Post(['api/cancel', 'api/topics/:topic/messages/:id/cancel'])
    @HttpCode(200)
    cancel(@Req() request: HeaderBag, @ApiInput() input: Record<string, unknown>) {
      return this.act(request, () => this.dashboard.actions.cancel(nameOf(input, 'topic'), nameOf(input, 'id')));
    }

    @Post(['api/pause', 'api/topics/:topic/pause'])
    @HttpCode(200)
    pause(@Req() request: HeaderBag, @ApiInput() input: Record<string, unknown>) {
      return this.act(request, () => this.dashboard.actions.setPaused(nameOf(input, 'topic'), true));
    }

    @Post(['api/resume', 'api/topics/:topic/resume'])
    @HttpCode(200)
    resume(@Req() request: HeaderBag, @ApiInput() input: Record<string, unknown>) {
      return this.act(request, () => this.dashboard.actions.setPaused(nameOf(input, 'topic'), false));
    }

    @Post(['api/run', 'api/topics/:topic/schedules/:schedule/run'])
    @HttpCode(200)
    runSchedule(@Req() request: HeaderBag, @ApiInput() input: Record<string, unknown>) {
      return this.act(request, () =>
        this.dashboard.actions.runSchedule(nameOf(input, 'topic'), nameOf(input, 'schedule')),
      );
    }

    @Post('api/unschedule')
    @HttpCode(200)
    removeSchedule(@Req() request: HeaderBag, @ApiInput() input: Record<string, unknown>) {
      return this.act(request, () =>
        this.dashboard.actions.removeSchedule(nameOf(input, 'topic'), nameOf(input, 'schedule')),
      );
    }

    // Bulk actions: the page counts what one selects (GET, the filter in the query) and shows it
    // in its confirmation before it starts one (POST, the filter in the JSON body).
    @Get('api/bulk/count')
    @Header('Cache-Control', 'no-store')
    bulkCount(@ApiInput() input: Record<string, unknown>) {
      return answer(() => this.dashboard.bulk.count(nameOf(input, 'topic'), bulkOf(input, ['topic'])));
    }

    @Post('api/bulk')
    @HttpCode(200)
    bulk(@Req() request: HeaderBag, @ApiInput() input: Record<string, unknown>, @Body() body: unknown) {
      return this.act(request, () => this.dashboard.bulk.start(nameOf(input, 'topic'), bulkOf(body)));
    }

    @Get('api/bulk/status')
    @Header('Cache-Control', 'no-store')
    bulkStatus(@ApiInput() input: Record<string, unknown>) {
      return answer(() => this.dashboard.bulk.status(nameOf(input, 'id')));
    }

    @Post('api/bulk/abort')
    @HttpCode(200)
    abortBulk(@Req() request: HeaderBag, @ApiInput() input: Record<string, unknown>) {
      return this.act(request, () => this.dashboard.bulk.abort(nameOf(input, 'id')));
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

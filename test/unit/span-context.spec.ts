import * as api from '@opentelemetry/api';
import { spanContextMaker } from '../../lib/observability/tracing/span-context';

const span = (spanId: string): api.Span =>
  api.trace.wrapSpanContext({ traceId: '4bf92f3577b34da6a3ce929d0e0e4736', spanId, traceFlags: 1 });
const other = api.createContextKey('other value');

describe('spanContextMaker', () => {
  const [parentSpan, child] = [span('00f067aa0ba902b7'), span('00f067aa0ba902b8')];
  const parent = api.trace.setSpan(api.ROOT_CONTEXT, parentSpan).setValue(other, 'kept');

  it("gives the parent's values with the span in place of the parent's, as setSpan does", () => {
    const context = spanContextMaker(api)(parent, child);
    expect(api.trace.getSpan(context)).toBe(child);
    expect(context.getValue(other)).toBe('kept');
    expect(api.trace.getSpan(parent)).toBe(parentSpan);
  });

  it('keeps the span and the parent values in a context set or deleted from it', () => {
    const context = spanContextMaker(api)(parent, child);
    const key = api.createContextKey('added');
    const added = context.setValue(key, 1);
    expect([api.trace.getSpan(added), added.getValue(key), added.getValue(other)]).toEqual([child, 1, 'kept']);
    const deleted = context.deleteValue(other);
    expect([api.trace.getSpan(deleted), deleted.getValue(other)]).toEqual([child, undefined]);
    expect(context.getValue(other)).toBe('kept');
  });

  it('uses setSpan where the API keeps spans under another key', () => {
    const elsewhere = api.createContextKey('elsewhere');
    const trace = {
      ...api.trace,
      getSpan: (context: api.Context) => context.getValue(elsewhere) as api.Span | undefined,
      setSpan: (context: api.Context, value: api.Span) => context.setValue(elsewhere, value),
    };
    const context = spanContextMaker({ ...api, trace } as typeof api)(parent, child);
    expect(context.getValue(elsewhere)).toBe(child);
  });
});

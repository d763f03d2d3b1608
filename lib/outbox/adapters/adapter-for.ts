import { OutboxTransactionError } from '../../errors';
import { drizzleAdapter } from './drizzle.adapter';
import { kyselyAdapter } from './kysely.adapter';
import { mikroOrmAdapter } from './mikro-orm.adapter';
import type { OutboxAdapter } from './outbox-adapter';
import { pgAdapter } from './pg.adapter';
import { prismaAdapter } from './prisma.adapter';
import { typeormAdapter } from './typeorm.adapter';

/**
 * The adapters, most specific shape first: a library's object can carry another's marks (a
 * MikroORM 7 em holds a Kysely instance, a Drizzle tx a pg client), never the other way round
 * at the top level, so each is asked about the object itself only.
 */
export const OUTBOX_ADAPTERS: readonly OutboxAdapter[] = [
  typeormAdapter,
  prismaAdapter,
  mikroOrmAdapter,
  drizzleAdapter,
  kyselyAdapter,
  pgAdapter,
];

const ACCEPTED =
  'pass a TypeORM EntityManager inside transaction() or QueryRunner after startTransaction(), the tx of ' +
  'prisma.$transaction(async (tx) => ...), a MikroORM em inside transactional(), the tx of a Drizzle or ' +
  'Kysely transaction, or a pg Client / PoolClient after BEGIN';

/**
 * The adapter of the library `tx` belongs to.
 * @throws {OutboxTransactionError} `unknown` when `tx` is not an object of a library the outbox knows.
 */
export function adapterFor(tx: unknown): OutboxAdapter {
  if (typeof tx === 'object' && tx !== null) {
    const adapter = OUTBOX_ADAPTERS.find((candidate) => candidate.recognizes(tx));
    if (adapter) return adapter;
  }
  throw new OutboxTransactionError('unknown', undefined, ACCEPTED);
}

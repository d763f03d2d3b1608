import { Column, CreateDateColumn, Entity, PrimaryColumn } from 'typeorm';

/** An order of the outbox demo, kept in PostgreSQL (the table `orders`, see sample-database.ts). */
@Entity({ name: 'orders' })
export class PlacedOrder {
  /** A UUID chosen by the app; it doubles as the id of the order's `order.committed` message. */
  @PrimaryColumn('uuid')
  id!: string;

  @Column('text')
  item!: string;

  @Column('numeric', { transformer: { to: (value: number) => value, from: (value: string) => Number(value) } })
  amount!: number;

  /** `placed` when written, `confirmed` once the handler of `order.committed` ran. */
  @Column('text', { default: 'placed' })
  status!: 'placed' | 'confirmed';

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt!: Date;
}

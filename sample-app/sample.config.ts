import { Injectable } from '@nestjs/common';

/** The sample's settings, from the environment (a real app would use @nestjs/config). */
@Injectable()
export class SampleConfig {
  readonly redisUrl = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
  /** The key prefix of the sample's queues, shared by the app, its billing client and the billing microservice. */
  readonly queuePrefix = 'sample';
  readonly port = Number(process.env.PORT ?? 3000);
  /** How long an order may stay unpaid before it is cancelled. */
  readonly paymentTimeoutMs = Number(process.env.PAYMENT_TIMEOUT_MS ?? 60_000);
  /** Share of invoice renderings that fail, to show retries and dead letters. */
  readonly invoiceFailureRate = Number(process.env.INVOICE_FAILURE_RATE ?? 0.3);
  /** How long after a customer's last order their summary is computed again (a debounced push). */
  readonly summaryDelayMs = Number(process.env.SUMMARY_DELAY_MS ?? 1_000);
  /** How long "sending" a confirmation mail takes. */
  readonly mailLatencyMs = Number(process.env.MAIL_LATENCY_MS ?? 20);
  /**
   * How many first attempts of each shipment's pickup booking the carrier refuses: the retry that follows
   * resumes after the stored steps (the label is not bought twice).
   */
  readonly pickupFailures = Number(process.env.PICKUP_FAILURES ?? 1);
  /** How long shutdown waits for running handlers before handing their messages back. */
  readonly drainMs = Number(process.env.DRAIN_MS ?? 5_000);
  /** Run no @QueueHandler in this process (a producer-only instance). */
  readonly consumers = process.env.CONSUMERS !== 'false';
  /** When the nightly report runs: a cron expression read in REPORT_TZ. */
  readonly reportCron = process.env.REPORT_CRON ?? '0 2 * * *';
  readonly reportTz = process.env.REPORT_TZ ?? 'UTC';
  /** The billing microservice's tax rate (0.2: 20 %); it alone reads it. */
  readonly taxRate = Number(process.env.TAX_RATE ?? 0.2);
  /** How long the app waits for a reply of the billing microservice before it answers 504. */
  readonly billingTimeoutMs = Number(process.env.BILLING_TIMEOUT_MS ?? 5_000);
  /** When set, the dashboard at /dashboard asks for `operator` and this password (it is local-only either way). */
  readonly dashboardPassword = process.env.DASHBOARD_PASSWORD || undefined;
}

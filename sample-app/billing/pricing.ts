import type { Quote } from './billing.messages';

/** What `amount` costs with tax at `taxRate`, rounded to the cent. */
export function quoteOf(amount: number, taxRate: number): Quote {
  const tax = Math.round(amount * taxRate * 100) / 100;
  return { amount, taxRate, tax, total: Math.round((amount + tax) * 100) / 100 };
}

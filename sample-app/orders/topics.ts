export const TOPICS = {
  created: 'order.created',
  paymentTimeout: 'order.payment-timeout',
  invoice: 'invoice.render',
} as const;

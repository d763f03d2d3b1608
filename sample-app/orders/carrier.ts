import { Injectable } from '@nestjs/common';
import { SampleConfig } from '../sample.config';

/** Stands in for a parcel carrier's API: a label costs money each time it is bought. */
@Injectable()
export class Carrier {
  private readonly labels = new Map<string, number>();

  constructor(private readonly config: SampleConfig) {}

  buyLabel(shipmentId: string): Promise<{ tracking: string }> {
    this.labels.set(shipmentId, this.labelsBought(shipmentId) + 1);
    return Promise.resolve({ tracking: `TRACK-${shipmentId}` });
  }

  /** Refuses the first `pickupFailures` attempts of a shipment, as a flaky booking API would. */
  bookPickup(shipmentId: string, attempt: number): Promise<{ pickupAt: string }> {
    if (attempt <= this.config.pickupFailures) {
      return Promise.reject(new Error(`Carrier booking for ${shipmentId} unavailable (attempt ${attempt})`));
    }
    return Promise.resolve({ pickupAt: new Date(Date.now() + 86_400_000).toISOString().slice(0, 10) });
  }

  labelsBought(shipmentId: string): number {
    return this.labels.get(shipmentId) ?? 0;
  }
}

/**
 * The payment gateway's side of the story: every charge that actually happened. A
 * duplicate here is a double charge, which is what the suite is looking for.
 */
export interface Effect {
  paymentId: string
  messageId: string
  groupId?: string
  /** Send order of the message within the queue. */
  sequence: number
  invocationId: string
  consumerId: string
  /** True (virtual) time of the charge. */
  at: number
}

export interface OrderViolation {
  paymentId: string
  messageId: string
  groupId: string
  /** Earlier messages of the group that had neither taken effect nor been dead-lettered. */
  overtaken: string[]
}

export class Ledger {
  readonly effects: Effect[] = []
  readonly byPayment = new Map<string, Effect[]>()
  readonly orderViolations: OrderViolation[] = []
  /** Payments seen applied in the orders table during a transact run (their effects are read back at the end). */
  readonly #seenApplied = new Set<string>()

  charge (effect: Effect): void {
    this.effects.push(effect)
    this.byPayment.set(effect.paymentId, [...(this.byPayment.get(effect.paymentId) ?? []), effect])
  }

  applied (paymentId: string): boolean {
    return this.byPayment.has(paymentId) || this.#seenApplied.has(paymentId)
  }

  markApplied (paymentId: string): void {
    this.#seenApplied.add(paymentId)
  }

  countOf (paymentId: string): number {
    return this.byPayment.get(paymentId)?.length ?? 0
  }
}

import { CardDeclinedError, type Payment, type Receipt } from '../sam-app/src/sqs-consumer.js'
import { currentObservation } from './invocation.js'

/** A card network being down: a fault, not an answer about the card. */
export class GatewayUnavailableError extends Error {
  constructor (network: string) {
    super(`card network ${network} unavailable`)
    this.name = 'GatewayUnavailableError'
  }
}

const networkOf = (cardToken: string): string => cardToken.split('_')[1] ?? 'unknown'

/**
 * The card gateway, in memory: it keeps the ledger of charges actually made, which is
 * what the demo must show to be exactly one per payment. It can lose a card network,
 * decline a card, and hold a charge in flight until told to finish it.
 */
export class CardGateway {
  /** Every successful charge, in order. */
  readonly ledger: Receipt[] = []
  readonly #down = new Set<string>()
  readonly #declined = new Map<string, string>()
  readonly #holds: Array<{ started: () => void, finish: Promise<void> }> = []

  /** `chargePrefix` tells this gateway's charge ids from another's. */
  constructor (readonly chargePrefix = 'ch_') {}

  networkDown (network: string): void { this.#down.add(network) }
  networkUp (network: string): void { this.#down.delete(network) }
  decline (cardToken: string, reason: string): void { this.#declined.set(cardToken, reason) }

  /**
   * The next charge waits until `finish()` is called; `started` resolves once it is
   * waiting, i.e. once some invocation owns the payment and is charging it.
   */
  holdNextCharge (): { started: Promise<void>, finish: () => void } {
    let started!: () => void
    let finish!: () => void
    const hasStarted = new Promise<void>((resolve) => { started = resolve })
    this.#holds.push({ started, finish: new Promise<void>((resolve) => { finish = resolve }) })
    return { started: hasStarted, finish }
  }

  readonly charge = async (payment: Payment): Promise<Receipt> => {
    const seen = currentObservation()
    const hold = this.#holds.shift()
    if (hold !== undefined) {
      hold.started()
      await hold.finish
    }
    try {
      const network = networkOf(payment.cardToken)
      if (this.#down.has(network)) throw new GatewayUnavailableError(network)
      const declined = this.#declined.get(payment.cardToken)
      if (declined !== undefined) throw new CardDeclinedError(payment.paymentId, declined)
      const receipt = {
        paymentId: payment.paymentId,
        chargeId: `${this.chargePrefix}${String(this.ledger.length + 1).padStart(4, '0')}`,
        amount: payment.amount,
        currency: payment.currency
      }
      this.ledger.push(receipt)
      seen?.charges.push({ paymentId: payment.paymentId, chargeId: receipt.chargeId })
      return receipt
    } catch (error) {
      seen?.charges.push({ paymentId: payment.paymentId, error: error as Error })
      throw error
    }
  }

  chargesOf (paymentId: string): number {
    return this.ledger.filter((r) => r.paymentId === paymentId).length
  }
}

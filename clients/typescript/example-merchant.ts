// A merchant's server, as docs/merchants.md's integration guide walks it: an escrow for an order,
// made with the merchant's API key; the buyer sent to its checkout; the order marked delivered
// with its tracking once shipped. Run against the real service by tests/e2e/merchant-story.clock.test.ts.
// Not part of the package.
import { createMerchantClient, type Data, EscrowApiError, unwrap } from './index.ts';

export type MerchantEscrow = Data<'merchant-escrow-get'>;

export function merchantEscrows(options: {
  baseUrl: string; // e.g. http://127.0.0.1:54321/functions/v1
  apiKey: string; // the merchant's key, from the server's secrets (never in an app or a browser)
  fetch?: (request: Request) => Promise<Response>; // optional: globalThis.fetch by default
}) {
  const api = createMerchantClient(options);
  return {
    /**
     * The escrow of an order, made once: the order's id is the reference, so a retry after a
     * timeout answers the same escrow. Show `checkout_url` to the buyer.
     */
    open: (order: {
      id: string;
      title: string;
      amount: number; // naira
      commission: number; // naira, taken from the seller's side
      buyerPhone: string;
      sellerPhone: string;
    }) =>
      unwrap(api.POST('/merchant-escrow-create', {
        body: {
          reference: order.id,
          category: 'goods_products',
          title: order.title,
          amount: order.amount,
          merchant_fee: order.commission,
          buyer_phone: order.buyerPhone,
          seller_phone: order.sellerPhone,
          metadata: { order_id: order.id },
        },
      })),

    /** The escrow of an order, by its reference; null when none was made for it. */
    async ofOrder(orderId: string): Promise<MerchantEscrow | null> {
      try {
        return await unwrap(
          api.GET('/merchant-escrow-get', {
            params: { query: { reference: orderId } },
          }),
        );
      } catch (err) {
        if (err instanceof EscrowApiError && err.status === 404) return null;
        throw err;
      }
    },

    /** The order has shipped: the buyer's inspection period starts. */
    shipped: (
      escrowId: string,
      tracking: { carrier: string; number: string; url?: string },
    ) =>
      unwrap(
        api.POST('/merchant-escrow-deliver', {
          body: { escrow_id: escrowId, tracking },
        }),
      ),
  };
}

/** Search attributes registered on the Temporal server (see src/devstack/temporal.ts). */
import { defineSearchAttributeKey } from '@temporalio/common';

export const OrderIdAttr = defineSearchAttributeKey('OrderId', 'KEYWORD');
export const VendorIdAttr = defineSearchAttributeKey('VendorId', 'KEYWORD');
export const PayoutStatusAttr = defineSearchAttributeKey('PayoutStatus', 'KEYWORD');

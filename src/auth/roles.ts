/** The roles a credential can carry, and what each may do (issue 9): `ordering` is the platform's
 * ordering service, `vendor:<vendorId>` one vendor's counter, `ops` the payout queue and the kill
 * switch, `admin` reference data, `finance` reconciliation. */
import { z } from 'zod';

export const PLAIN_ROLES = ['ordering', 'ops', 'admin', 'finance'] as const;
export type PlainRole = (typeof PLAIN_ROLES)[number];
export type VendorRole = `vendor:${string}`;
export type Role = PlainRole | VendorRole;

const VENDOR_ROLE = /^vendor:[A-Za-z0-9_-]{1,64}$/;

export const roleSchema = z.string().trim().refine(
  (r): r is Role => (PLAIN_ROLES as readonly string[]).includes(r) || VENDOR_ROLE.test(r),
  { message: `a role is one of ${PLAIN_ROLES.join(', ')} or vendor:<vendorId>` },
) as unknown as z.ZodType<Role>;

/** What a route asks for: one of the plain roles, or `vendor` (any vendor:<id>; the route then
 * checks the id against the resource). */
export type RoleRequirement = PlainRole | 'vendor';

export function satisfies(roles: readonly Role[], requirement: RoleRequirement): boolean {
  return requirement === 'vendor' ? roles.some((r) => r.startsWith('vendor:')) : roles.includes(requirement);
}

export const vendorRole = (vendorId: string): VendorRole => `vendor:${vendorId}`;

/** A staff role for any vendor, a vendor key only for its own. A route that uses one requires
 * `vendor` and that staff role (either lets the caller in), then checks the vendor here. */
const staffOrOwnVendor = (staff: PlainRole) => (roles: readonly Role[], vendorId: string): boolean =>
  roles.includes(staff) || roles.includes(vendorRole(vendorId));

/** Cash confirmation: ops for any vendor, a vendor key only for its own orders. */
export const mayActForVendor = staffOrOwnVendor('ops');

/** Vendor statements: finance reads any vendor's, a vendor key only its own. */
export const mayReadVendorStatement = staffOrOwnVendor('finance');

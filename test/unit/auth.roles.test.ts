import { mayActForVendor, mayReadVendorStatement, roleSchema, satisfies } from '../../src/auth/roles';

describe('auth roles', () => {
  test('when a role is parsed, then the five kinds are accepted and anything else is refused', () => {
    for (const role of ['ordering', 'ops', 'admin', 'finance', 'vendor:ven_dosa']) expect(roleSchema.parse(role)).toBe(role);
    for (const role of ['root', 'vendor:', 'vendor:has space', 'Ops', '']) expect(roleSchema.safeParse(role).success).toBe(false);
  });

  test('when a route needs `vendor`, then any vendor key satisfies it, and a plain role only itself', () => {
    expect(satisfies(['vendor:v1'], 'vendor')).toBe(true);
    expect(satisfies(['ops'], 'vendor')).toBe(false);
    expect(satisfies(['ops', 'finance'], 'finance')).toBe(true);
    expect(satisfies(['admin'], 'ops')).toBe(false);
  });

  test('when a cash order is confirmed, then ops may for any vendor and a vendor key only for its own', () => {
    expect(mayActForVendor(['ops'], 'v1')).toBe(true);
    expect(mayActForVendor(['vendor:v1'], 'v1')).toBe(true);
    expect(mayActForVendor(['vendor:v1'], 'v2')).toBe(false);
    expect(mayActForVendor(['ordering', 'admin'], 'v1')).toBe(false);
  });

  test('when a vendor statement is read, then finance may for any vendor and a vendor key only its own; ops may not', () => {
    expect(mayReadVendorStatement(['finance'], 'v1')).toBe(true);
    expect(mayReadVendorStatement(['vendor:v1'], 'v1')).toBe(true);
    expect(mayReadVendorStatement(['vendor:v1'], 'v2')).toBe(false);
    expect(mayReadVendorStatement(['ops', 'admin'], 'v1')).toBe(false);
  });
});

/** Why a signed event was not applied: our schema refused it, or it is outside the replay window. */
export type SetAsideReason = 'schema_refused' | 'too_old' | 'from_future';
export const SET_ASIDE_REASONS: readonly [SetAsideReason, ...SetAsideReason[]] = ['schema_refused', 'too_old', 'from_future'];

import type { Db } from '../db/pool';

export function createProbeActivities({ db }: { db: Db }) {
  return {
    /** Idempotent: a retry after a lost answer finds the row it wrote. */
    async writeProbeRow(workflowId: string, message: string): Promise<number> {
      const { rows } = await db.query<{ id: number }>(
        `INSERT INTO system_probes (workflow_id, message) VALUES ($1, $2)
         ON CONFLICT (workflow_id) DO UPDATE SET message = EXCLUDED.message RETURNING id`,
        [workflowId, message],
      );
      return rows[0]!.id;
    },
    async readProbeRow(id: number): Promise<string> {
      const { rows } = await db.query<{ message: string }>('SELECT message FROM system_probes WHERE id = $1', [id]);
      if (!rows[0]) throw new Error(`probe row ${id} not found`);
      return rows[0].message;
    },
  };
}

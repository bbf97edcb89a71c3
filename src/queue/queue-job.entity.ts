import { Column, Entity, PrimaryColumn } from 'typeorm';
import { utcDate } from '../database/column-transformers.js';

@Entity('queue_jobs')
export class QueueJobEntity {
  @PrimaryColumn({ type: 'varchar', length: 36 })
  id: string;

  @Column({ type: 'varchar', length: 100 })
  name: string;

  /** Set while the job is waiting or active; cleared when it ends so the same key can be queued again. */
  @Column({ name: 'dedupe_key', type: 'varchar', length: 191, nullable: true })
  dedupeKey: string | null;

  @Column({ type: 'text' })
  payload: string;

  @Column({ type: 'varchar', length: 12 })
  state: 'waiting' | 'active' | 'failed';

  @Column({ type: 'int', default: 0 })
  attempts: number;

  @Column({ name: 'max_attempts', type: 'int' })
  maxAttempts: number;

  @Column({ name: 'backoff_ms', type: 'int' })
  backoffMs: number;

  @Column({ name: 'run_at', type: 'datetime', transformer: utcDate })
  runAt: Date;

  @Column({ name: 'locked_until', type: 'datetime', nullable: true, transformer: utcDate })
  lockedUntil: Date | null;

  @Column({ name: 'last_error', type: 'text', nullable: true })
  lastError: string | null;

  @Column({ name: 'created_at', type: 'datetime', transformer: utcDate })
  createdAt: Date;
}

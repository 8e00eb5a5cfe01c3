import { AppError } from "../errors.ts";
import {
  allSealedValues,
  replaceSealedValue,
  someSealedSecret,
  type SealedValue,
} from "./sql/sealed-values.ts";
import {
  ENCRYPTION_KEY_CHECK,
  insertSettingIfAbsent,
  readSetting,
  writeSetting,
} from "./sql/settings.ts";
import { SqlSlice } from "./sql-slice.ts";

export type { SealedValue } from "./sql/sealed-values.ts";

/** What was re-sealed by a key rotation. */
export interface ResealCounts {
  readonly destinations: number;
  readonly responses: number;
}

/**
 * The check value of the encryption key (issue 19) and the values sealed with that key: what
 * a process compares its key with when it starts, and what a key rotation rewrites.
 */
export interface EncryptionKeyStore {
  /** The check value recorded by the first process; null until one is. */
  recordedKeyCheck(): Promise<string | null>;

  /** Records `check` unless a check value is recorded; returns the recorded one (the first writer's). */
  recordKeyCheck(check: string): Promise<string>;

  /** One destination's sealed signing secret, to try a key on before any check is recorded. */
  someSealedSecret(): Promise<SealedValue | null>;

  /**
   * In one transaction: every sealed value replaced by what `reseal` makes of it, and the
   * check value `expectedCheck` replaced by `newCheck`. Refused (`encryption_key_mismatch`),
   * with nothing changed, when the recorded check value is not `expectedCheck`, for example
   * because another rotation committed first; whatever `reseal` throws undoes it all too.
   */
  resealAll(
    expectedCheck: string,
    newCheck: string,
    reseal: (value: SealedValue) => string,
  ): Promise<ResealCounts>;
}

/** The EncryptionKeyStore over any `Database`: the SQL is in `./sql/`. */
export class SqlEncryptionKeyStore extends SqlSlice implements EncryptionKeyStore {
  recordedKeyCheck(): Promise<string | null> {
    return readSetting(this.db, ENCRYPTION_KEY_CHECK);
  }

  recordKeyCheck(check: string): Promise<string> {
    return this.db.transaction(async (tx) => {
      await insertSettingIfAbsent(tx, ENCRYPTION_KEY_CHECK, check, this.clock.now().getTime());
      return (await readSetting(tx, ENCRYPTION_KEY_CHECK)) ?? check;
    });
  }

  someSealedSecret(): Promise<SealedValue | null> {
    return someSealedSecret(this.db);
  }

  resealAll(
    expectedCheck: string,
    newCheck: string,
    reseal: (value: SealedValue) => string,
  ): Promise<ResealCounts> {
    const lock = this.db.rowLockClause;
    return this.db.transaction(async (tx) => {
      // Taken first, so that two rotations at once run one after the other.
      const [row] = await tx.query<{ value: string }>(
        `SELECT value FROM settings WHERE name = $1 ${lock}`,
        [ENCRYPTION_KEY_CHECK],
      );
      if (row !== undefined && row.value !== expectedCheck) {
        throw new AppError(
          "encryption_key_mismatch",
          "The database's secrets are no longer sealed with the current key (another rotation finished first?); nothing was changed.",
        );
      }
      const counts = { destinations: 0, responses: 0 };
      for (const value of await allSealedValues(tx, lock)) {
        await replaceSealedValue(tx, value, reseal(value));
        if (value.table === "destinations") counts.destinations += 1;
        else counts.responses += 1;
      }
      await writeSetting(tx, ENCRYPTION_KEY_CHECK, newCheck, this.clock.now().getTime());
      return counts;
    });
  }
}

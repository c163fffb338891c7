import type { FastifyInstance } from 'fastify';
import type { AuthorizeSettings } from '../config/env.js';
import { StandInJournal } from './stand-in-journal.js';
import { StandInRecords, type AdviceRecorder } from './stand-in-records.js';

/**
 * The stand-in answers a door of the server owes the ledger (issue 37, item 3), kept on the
 * disk when `settings.journalDir` is set: opened before the first request (taking over what a
 * crashed process still owed) and closed with the server. Every door that answers in stand-in
 * (the authorize route, the processors' adapters) keeps its owed answers this way, so a crash
 * loses none of them whichever door gave them.
 */
export function keptStandInRecords(
  app: FastifyInstance,
  store: AdviceRecorder,
  settings: AuthorizeSettings,
): StandInRecords {
  const records = new StandInRecords(store, app.log);
  const journalDir = settings.journalDir;
  if (journalDir !== undefined) {
    app.addHook('onReady', async () => {
      try {
        await records.useJournal(await StandInJournal.open(journalDir));
      } catch (error) {
        app.log.error(
          { err: error, journalDir },
          'the stand-in journal could not be opened: stand-in answers are owed in memory only',
        );
      }
    });
  }
  app.addHook('onClose', async () => {
    await records.close();
  });
  return records;
}

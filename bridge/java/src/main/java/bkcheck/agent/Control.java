package bkcheck.agent;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintWriter;
import java.lang.reflect.Field;
import java.lang.reflect.Method;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.TimeUnit;
import net.bytebuddy.asm.Advice;
import org.apache.bookkeeper.bookie.CheckpointSource;
import org.apache.bookkeeper.bookie.LedgerStorage;
import org.apache.bookkeeper.bookie.storage.ldb.DbLedgerStorage;

/**
 * The harness's hand inside a bookie: a line protocol on a loopback port.
 * Each command is a step of the model the harness awaits; none waits on a
 * clock.
 *
 * <pre>
 *   checkpoint        a checkpoint with a non-empty write cache (BookieCheckpoints)
 *   checkpoint idle   a checkpoint with an empty one (BookieCheckpointsIdle)
 *   short-read L E    the next read of entry E of ledger L from the entry log
 *                     comes back short (BookieFailsRead; ShortRead), after a
 *                     checkpoint has moved it there from the write cache
 *   preboot           the pre-boot check held since the bookie's start runs
 *                     now, awaited to its end (BookieRunsPreBootCheck; PreBoot)
 *   journal hold      the journal's records kept back from now on (JournalHold)
 *   journal release   the records kept back written, in order, and awaited
 *   race arm L        the next add of ledger L stops after creating its handle
 *   race await-created  ... and is awaited there (AddRace)
 *   race interleave   a fence delivered since: the two interleaved, awaited
 *   race store        the add stores
 * </pre>
 *
 * A checkpoint is SyncThread's own, as its flushInterval timer would start
 * it ({@code doCheckpoint(checkpointSource.newCheckpoint())} on its
 * executor), awaited to its end: DbLedgerStorage flushes its write cache
 * and its ledger index, or returns at once with an empty write cache, and
 * either way the journal's mark moves. The model's checkpoint with a
 * non-empty cache holds other ledgers' entries where this ledger has none
 * waiting; the agent puts one entry of a ledger of its own in the cache
 * then. Answers are one line: {@code ok} or {@code error WHY}.
 */
public final class Control {
    private Control() {}

    /** The bookie's SyncThread, once BookieImpl has built it. */
    private static volatile Object syncThread;

    /** A ledger no client has: the entries of "other ledgers" a checkpoint flushes. */
    private static final long OTHER_LEDGER = 0x7fff_ffff_0000L;
    private static long otherEntry;

    /** Captures the SyncThread BookieImpl builds. */
    public static final class SyncThreadCreated {
        @Advice.OnMethodExit
        static void exit(@Advice.This Object self) {
            Control.created(self);
        }
    }

    public static void created(Object self) {
        syncThread = self;
    }

    static void start(int port) {
        if (port == 0) {
            return;
        }
        ServerSocket server;
        try {
            server = new ServerSocket();
            server.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), port));
        } catch (IOException e) {
            BookieAgent.fail("control port " + port + ": " + e);
            return;
        }
        Thread t = new Thread(() -> {
            while (true) {
                try {
                    Socket s = server.accept();
                    Thread h = new Thread(() -> serve(s), "bkcheck-control-conn");
                    h.setDaemon(true);
                    h.start();
                } catch (IOException e) {
                    return;
                }
            }
        }, "bkcheck-control");
        t.setDaemon(true);
        t.start();
    }

    private static void serve(Socket s) {
        try (s; BufferedReader in = new BufferedReader(new InputStreamReader(s.getInputStream(), StandardCharsets.UTF_8));
             PrintWriter out = new PrintWriter(s.getOutputStream(), true, StandardCharsets.UTF_8)) {
            String line;
            while ((line = in.readLine()) != null) {
                String answer;
                try {
                    answer = handle(line.trim());
                } catch (Throwable t) {
                    answer = "error " + t;
                }
                out.println(answer.replace('\n', ' '));
            }
        } catch (IOException e) {
            // the harness closed the connection
        }
    }

    private static String handle(String line) throws Exception {
        String[] w = line.split(" ");
        switch (w[0]) {
            case "checkpoint":
                return checkpoint(w.length == 1);
            case "short-read":
                // the entry must be read from the entry log: a checkpoint
                // moves it there from the write cache first
                String cp = checkpoint(true);
                if (!cp.equals("ok")) {
                    return cp;
                }
                ShortRead.arm(Long.parseLong(w[1]), Long.parseLong(w[2]));
                return "ok";
            case "preboot":
                return PreBoot.run();
            case "race":
                switch (w.length > 1 ? w[1] : "") {
                    case "arm":
                        return AddRace.arm(Long.parseLong(w[2]));
                    case "await-created":
                        return AddRace.awaitCreated();
                    case "interleave":
                        return AddRace.interleave();
                    case "store":
                        return AddRace.store();
                    default:
                        return "error unknown command: " + line;
                }
            case "journal":
                if (w.length == 2 && w[1].equals("hold")) {
                    return JournalHold.start();
                }
                if (w.length == 2 && w[1].equals("release")) {
                    return JournalHold.release();
                }
                return "error unknown command: " + line;
            default:
                return "error unknown command: " + line;
        }
    }

    private static synchronized String checkpoint(boolean flush) throws Exception {
        Object st = syncThread;
        if (st == null) {
            return "error the bookie has not built its SyncThread yet";
        }
        LedgerStorage storage = (LedgerStorage) field(st, "ledgerStorage");
        CheckpointSource source = (CheckpointSource) field(st, "checkpointSource");
        if (!(storage instanceof DbLedgerStorage)) {
            return "error the bookie's ledger storage is " + storage.getClass().getName() + ", not DbLedgerStorage";
        }
        boolean dirty = flushRequired((DbLedgerStorage) storage);
        if (!flush && dirty) {
            return "error the write cache holds entries: an idle checkpoint is one with nothing to flush";
        }
        if (flush && !dirty) {
            addOtherEntry(storage);
        }
        Class<?> syncThreadClass = Class.forName("org.apache.bookkeeper.bookie.SyncThread");
        Method doCheckpoint = syncThreadClass.getDeclaredMethod("doCheckpoint", CheckpointSource.Checkpoint.class);
        doCheckpoint.setAccessible(true);
        doCheckpoint.invoke(st, source.newCheckpoint());
        // SyncThread's executor is single-threaded: a task queued after the
        // checkpoint ends after it.
        ((ExecutorService) field(st, "executor")).submit(() -> { }).get(60, TimeUnit.SECONDS);
        if (flush && flushRequired((DbLedgerStorage) storage)) {
            return "error the write cache still holds entries after the checkpoint";
        }
        Fixes.acted("checkpoint", flush ? "a checkpoint with a non-empty write cache" : "a checkpoint with an empty write cache");
        return "ok";
    }

    private static boolean flushRequired(DbLedgerStorage storage) throws Exception {
        List<?> dirs = directories(storage);
        for (Object dir : dirs) {
            Method m = dir.getClass().getDeclaredMethod("isFlushRequired");
            m.setAccessible(true);
            if ((Boolean) m.invoke(dir)) {
                return true;
            }
        }
        return false;
    }

    private static void addOtherEntry(LedgerStorage storage) throws Exception {
        storage.setMasterKey(OTHER_LEDGER, "bkcheck".getBytes(StandardCharsets.UTF_8));
        ByteBuf entry = Unpooled.buffer(32);
        entry.writeLong(OTHER_LEDGER);
        entry.writeLong(otherEntry++);
        entry.writeLong(-1); // its LAC
        entry.writeLong(0);
        storage.addEntry(entry);
    }

    /**
     * DbLedgerStorage's storage of each ledger directory
     * (getLedgerStorageList, package-private before 4.16).
     */
    static List<?> directories(Object dbLedgerStorage) throws Exception {
        return (List<?>) Fixes.call(dbLedgerStorage, "getLedgerStorageList");
    }

    /** The named field of o, declared by its class or a superclass. */
    static Object field(Object o, String name) throws ReflectiveOperationException {
        return declaredField(o, name).get(o);
    }

    /** The named field of o's class or a superclass, made accessible. */
    static Field declaredField(Object o, String name) throws NoSuchFieldException {
        for (Class<?> c = o.getClass(); c != null; c = c.getSuperclass()) {
            try {
                Field f = c.getDeclaredField(name);
                f.setAccessible(true);
                return f;
            } catch (NoSuchFieldException e) {
                // look in the superclass
            }
        }
        throw new NoSuchFieldException(o.getClass().getName() + "." + name);
    }
}

package bkcheck.agent;

import static net.bytebuddy.matcher.ElementMatchers.isConstructor;
import static net.bytebuddy.matcher.ElementMatchers.named;
import static net.bytebuddy.matcher.ElementMatchers.none;
import static net.bytebuddy.matcher.ElementMatchers.takesArguments;

import java.lang.instrument.Instrumentation;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import net.bytebuddy.ByteBuddy;
import net.bytebuddy.agent.builder.AgentBuilder;
import net.bytebuddy.asm.Advice;
import net.bytebuddy.asm.AsmVisitorWrapper;
import net.bytebuddy.description.method.MethodDescription;
import net.bytebuddy.description.method.MethodList;
import net.bytebuddy.description.type.TypeDescription;
import net.bytebuddy.dynamic.DynamicType;
import net.bytebuddy.matcher.ElementMatcher;
import net.bytebuddy.utility.JavaModule;

/**
 * bkcheck's agent for a bookie's JVM and the client driver's
 * ({@code -javaagent:bkcheck-agent.jar=ARGS}).
 * It weaves the project's own advice into the released classes as they load;
 * the release's jars are never changed. ARGS are {@code control=PORT} (the
 * harness's control connection, {@link Control}) and, optionally,
 * {@code fixes=A+B}: the candidate fixes to weave, by the names of
 * {@link Fixes#WEAVES}; {@code preboot=hold}: the data-integrity
 * pre-boot check held until the harness runs it ({@link PreBoot});
 * {@code journal=hold}: the journal's records held on demand until the
 * harness releases them ({@link JournalHold}); {@code race=add}: an add
 * and a fence interleaved inside the bookie ({@link AddRace});
 * {@code autorecovery=hold}: the Auditor's and the ReplicationWorker's steps
 * held at gates in the client driver ({@link AutoRecoveryHold}). Every class a weave changes is loaded before the
 * bookie starts, and a weave that did not take stops the JVM (exit 70), so
 * that a run "with the fix" never runs without it.
 */
public final class BookieAgent {
    private BookieAgent() {}

    /** One change to one released class: advice on a method, or a call inside it substituted. */
    record Weave(String type, ElementMatcher<? super MethodDescription> method, AsmVisitorWrapper change) {
        Weave(String type, ElementMatcher<? super MethodDescription> method, Class<?> advice) {
            this(type, method, Advice.to(advice).on(method));
        }
    }

    public static void premain(String args, Instrumentation inst) {
        Map<String, String> opts = parse(args);
        // A set: a weave two options name (await-preboot-check's and the
        // pre-boot hold's) is woven once.
        Set<Weave> weaves = new LinkedHashSet<>();
        weaves.add(new Weave("org.apache.bookkeeper.bookie.SyncThread", isConstructor(), Control.SyncThreadCreated.class));
        weaves.addAll(ShortRead.WEAVES);
        // Before the fixes: a gate's advice is then the outer one on a
        // method a fix changes too (PR #4551's), so that the gate is
        // reached before the fix decides.
        if (opts.getOrDefault("autorecovery", "").equals("hold")) {
            weaves.addAll(AutoRecoveryHold.WEAVES);
        }
        String fixes = opts.getOrDefault("fixes", "");
        for (String fix : fixes.isEmpty() ? new String[0] : fixes.split("\\+")) {
            List<Weave> w = Fixes.WEAVES.get(fix);
            if (w == null) {
                fail("unknown fix " + fix + " (the agent weaves " + String.join(", ", Fixes.WEAVES.keySet()) + ")");
            }
            weaves.addAll(w);
        }
        if (opts.getOrDefault("race", "").equals("add")) {
            weaves.addAll(AddRace.WEAVES);
        }
        if (opts.getOrDefault("journal", "").equals("hold")) {
            weaves.addAll(JournalHold.WEAVES);
        }
        PreBoot.await = List.of(fixes.split("\\+")).contains("await-preboot-check");
        if (opts.getOrDefault("preboot", "").equals("hold")) {
            weaves.addAll(PreBoot.WEAVES);
        }
        Set<String> woven = ConcurrentHashMap.newKeySet();
        Map<String, Throwable> failed = new ConcurrentHashMap<>();
        AgentBuilder builder = new AgentBuilder.Default(new ByteBuddy().ignore(none())).with(new AgentBuilder.Listener.Adapter() {
            @Override
            public void onTransformation(TypeDescription type, ClassLoader loader, JavaModule module,
                                         boolean loaded, DynamicType dynamicType) {
                woven.add(type.getName());
            }

            @Override
            public void onError(String type, ClassLoader loader, JavaModule module, boolean loaded, Throwable t) {
                failed.put(type, t);
            }
        });
        Map<String, List<Weave>> byType = new LinkedHashMap<>();
        for (Weave w : weaves) {
            byType.computeIfAbsent(resolve(w.type()), k -> new ArrayList<>()).add(w);
        }
        for (Map.Entry<String, List<Weave>> e : byType.entrySet()) {
            List<Weave> ws = e.getValue();
            builder = builder.type(named(e.getKey())).transform((b, type, loader, module, domain) -> {
                for (Weave w : ws) {
                    b = b.visit(w.change());
                }
                return b;
            });
        }
        builder.installOn(inst);
        for (Map.Entry<String, List<Weave>> e : byType.entrySet()) {
            String type = e.getKey();
            Class<?> cls = null;
            try {
                cls = Class.forName(type, false, ClassLoader.getSystemClassLoader());
            } catch (ClassNotFoundException ex) {
                fail("the release has no class " + type);
            }
            // A weave whose method the release lacks would change nothing:
            // ByteBuddy still reports the class transformed.
            MethodList<?> methods = TypeDescription.ForLoadedType.of(cls).getDeclaredMethods();
            for (Weave w : e.getValue()) {
                MethodList<?> hit = methods.filter(w.method());
                if (hit.isEmpty()) {
                    fail("the release's " + type + " has no method the weave " + w.change().getClass().getSimpleName() + " changes (" + w.method() + ")");
                }
                for (MethodDescription m : hit) {
                    System.err.println("bkcheck agent: woven " + type + "." + m.getInternalName() + m.getDescriptor());
                }
            }
            if (failed.containsKey(type)) {
                fail("weaving " + type + ": " + failed.get(type));
            }
            if (!woven.contains(type)) {
                fail("weaving " + type + ": ByteBuddy did not transform it");
            }
        }
        Control.start(Integer.parseInt(opts.getOrDefault("control", "0")));
        System.err.println("bkcheck agent: woven " + String.join(", ", byType.keySet())
                + (fixes.isEmpty() ? "" : " (fixes " + fixes + ")"));
    }

    /**
     * The class a weave names, of this release: "A|B" names a class that a
     * release renamed (EntryLogger became DefaultEntryLogger in 4.16), the
     * first the classpath has. The class is located as a resource, not
     * loaded, so that the weave still sees it load.
     */
    static String resolve(String type) {
        for (String t : type.split("\\|")) {
            if (ClassLoader.getSystemClassLoader().getResource(t.replace('.', '/') + ".class") != null) {
                return t;
            }
        }
        return type.split("\\|")[0];
    }

    static ElementMatcher<? super MethodDescription> method(String name, int args) {
        return named(name).and(takesArguments(args));
    }

    private static Map<String, String> parse(String args) {
        Map<String, String> out = new LinkedHashMap<>();
        if (args == null) {
            return out;
        }
        for (String kv : args.split(";")) {
            int i = kv.indexOf('=');
            if (i > 0) {
                out.put(kv.substring(0, i), kv.substring(i + 1));
            }
        }
        return out;
    }

    static void fail(String why) {
        System.err.println("bkcheck agent: " + why);
        System.err.flush();
        Runtime.getRuntime().halt(70);
    }
}

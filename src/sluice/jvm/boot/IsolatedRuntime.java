package sluice.jvmhost.boot;

import java.io.File;
import java.lang.reflect.InvocationTargetException;
import java.net.MalformedURLException;
import java.net.URL;
import java.net.URLClassLoader;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Kafka Connect's runtime in a class loader of its own, inside Spark's JVM (the driver's or an
 * executor's). Spark brings its own, older kafka-clients and Jackson; the Connect runtime,
 * its kafka-clients and the JVM task host live apart from them, under the platform class
 * loader. Logging is the one thing shared: SLF4J and Log4j come from Spark's loader, so the
 * runtime's and the plugins' log lines go where Spark's go.
 *
 * <p>One loader per distinct class path, made once per JVM: every task host and the
 * driver's plugin registry in one JVM share the runtime's classes.
 */
public final class IsolatedRuntime {
    private static final Map<String, ClassLoader> LOADERS = new ConcurrentHashMap<>();
    private static final String[] SHARED_PACKAGES = {"org.slf4j.", "org.apache.logging.log4j.", "org.apache.log4j."};

    private IsolatedRuntime() {
    }

    /** The loader of the runtime whose jars {@code classpath} lists (joined by the path separator). */
    public static ClassLoader loader(String classpath) {
        return LOADERS.computeIfAbsent(classpath, IsolatedRuntime::newLoader);
    }

    /** Calls {@code className.method(argument)}, a static method of the runtime, and returns its result. */
    public static Object callStatic(String classpath, String className, String method, String argument)
            throws Exception {
        return inRuntime(classpath, className, type -> type.getMethod(method, String.class).invoke(null, argument));
    }

    /** A new instance of the runtime's {@code className}, made with its one-string constructor. */
    public static Object create(String classpath, String className, String argument) throws Exception {
        return inRuntime(classpath, className, type -> type.getConstructor(String.class).newInstance(argument));
    }

    private interface Reflective {
        Object apply(Class<?> type) throws ReflectiveOperationException;
    }

    /**
     * {@code action} on the runtime's class {@code className}, with the runtime's loader as the
     * thread's context loader; what the called code throws is thrown as it is.
     */
    private static Object inRuntime(String classpath, String className, Reflective action) throws Exception {
        ClassLoader loader = loader(classpath);
        Thread thread = Thread.currentThread();
        ClassLoader previous = thread.getContextClassLoader();
        thread.setContextClassLoader(loader);
        try {
            return action.apply(Class.forName(className, true, loader));
        } catch (InvocationTargetException e) {
            if (e.getCause() instanceof Exception cause) {
                throw cause;
            }
            throw e;
        } finally {
            thread.setContextClassLoader(previous);
        }
    }

    private static ClassLoader newLoader(String classpath) {
        List<URL> urls = new ArrayList<>();
        for (String entry : classpath.split(File.pathSeparator)) {
            if (entry.isEmpty()) {
                continue;
            }
            try {
                urls.add(new File(entry).toURI().toURL());
            } catch (MalformedURLException e) {
                throw new IllegalArgumentException("Not a usable class path entry: " + entry, e);
            }
        }
        return new RuntimeLoader(urls.toArray(new URL[0]), IsolatedRuntime.class.getClassLoader());
    }

    private static final class RuntimeLoader extends URLClassLoader {
        static {
            ClassLoader.registerAsParallelCapable();
        }

        private final ClassLoader shared;

        RuntimeLoader(URL[] urls, ClassLoader shared) {
            super("sluice-connect-runtime", urls, ClassLoader.getPlatformClassLoader());
            this.shared = shared;
        }

        @Override
        protected Class<?> loadClass(String name, boolean resolve) throws ClassNotFoundException {
            for (String prefix : SHARED_PACKAGES) {
                if (name.startsWith(prefix)) {
                    return shared.loadClass(name);
                }
            }
            return super.loadClass(name, resolve);
        }
    }
}

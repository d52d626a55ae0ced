package sluice.jvmhost.boot;

import java.io.File;
import java.util.Iterator;
import java.util.StringJoiner;
import org.apache.spark.SparkFiles;
import org.apache.spark.api.java.function.VoidFunction;

/**
 * The Spark task of a JVM task host: the function of a one-partition job that Sluice's
 * worker submits from Python ({@code JavaRDD.foreachPartitionAsync}). It runs the host
 * ({@code sluice.jvmhost.TaskHost}) inside the isolated Connect runtime until the worker lets
 * the host go. The runtime's jars are read where the worker found them, or, on executors of
 * another machine, from the files the worker added to the Spark context.
 */
public final class JvmTaskHostFunction implements VoidFunction<Iterator<Integer>> {
    private static final long serialVersionUID = 1L;

    private final String classpath;
    private final String bootstrap;

    public JvmTaskHostFunction(String classpath, String bootstrap) {
        this.classpath = classpath;
        this.bootstrap = bootstrap;
    }

    @Override
    public void call(Iterator<Integer> rows) throws Exception {
        while (rows.hasNext()) {
            rows.next();
        }
        IsolatedRuntime.callStatic(localClasspath(classpath), "sluice.jvmhost.TaskHost", "run", bootstrap);
    }

    static String localClasspath(String classpath) {
        StringJoiner local = new StringJoiner(File.pathSeparator);
        for (String entry : classpath.split(File.pathSeparator)) {
            if (entry.isEmpty()) {
                continue;
            }
            File file = new File(entry);
            local.add(file.exists() ? entry : SparkFiles.get(file.getName()));
        }
        return local.toString();
    }
}

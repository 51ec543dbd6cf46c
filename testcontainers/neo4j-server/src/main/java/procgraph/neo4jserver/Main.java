package procgraph.neo4jserver;

import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.CountDownLatch;

import org.neo4j.configuration.GraphDatabaseSettings;
import org.neo4j.configuration.connectors.BoltConnector;
import org.neo4j.configuration.connectors.BoltConnectorInternalSettings;
import org.neo4j.configuration.helpers.SocketAddress;
import org.neo4j.dbms.api.DatabaseManagementService;
import org.neo4j.dbms.api.DatabaseManagementServiceBuilder;
import org.neo4j.graphdb.GraphDatabaseService;
import org.neo4j.io.ByteUnit;

/**
 * Runs a real embedded Neo4j (Community, the version in pom.xml) with only the
 * Bolt connector, for procgraph's tests. Started and stopped by the `start` and
 * `stop` scripts beside pom.xml; not meant for anything but tests.
 *
 * <p>Arguments, all required except --port, --pagecache and --setting:
 * <pre>
 *   --home DIR        the DBMS home: databases and transaction logs go here (a temp dir; `stop` deletes it)
 *   --run DIR         where this process writes neo4j.pid, port and ready, and Neo4j writes logs/
 *   --password PW     password set for user neo4j (auth is enabled)
 *   --port N          Bolt port on 127.0.0.1; 0 picks a free one (default 7687)
 *   --pagecache SIZE  page cache in MiB (default 256)
 *   --setting K=V     a Neo4j setting by its name (repeatable), e.g. dbms.cypher.min_replan_interval=1h
 * </pre>
 *
 * <p>Once Bolt accepts connections and the password is set, it writes the
 * chosen port to RUN/port and then RUN/ready (both atomically). It shuts the
 * DBMS down cleanly on SIGTERM/SIGINT.
 */
public final class Main {
    private Main() {}

    public static void main(String[] args) throws Exception {
        Path home = null;
        Path run = null;
        String password = null;
        int port = 7687;
        long pagecacheMiB = 256;
        Map<String, String> settings = new HashMap<>();
        for (int i = 0; i < args.length; i++) {
            String a = args[i];
            if (i + 1 >= args.length) {
                usage("missing value for " + a);
            }
            String v = args[++i];
            switch (a) {
                case "--home" -> home = Path.of(v).toAbsolutePath();
                case "--run" -> run = Path.of(v).toAbsolutePath();
                case "--password" -> password = v;
                case "--port" -> port = Integer.parseInt(v);
                case "--pagecache" -> pagecacheMiB = Long.parseLong(v);
                case "--setting" -> {
                    int eq = v.indexOf('=');
                    if (eq <= 0) {
                        usage("--setting wants NAME=VALUE, got " + v);
                    }
                    settings.put(v.substring(0, eq), v.substring(eq + 1));
                }
                default -> usage("unknown argument " + a);
            }
        }
        if (home == null || run == null || password == null) {
            usage("--home, --run and --password are required");
        }
        if (password.length() < 8) {
            // Neo4j 5.x refuses passwords shorter than dbms.security.auth_minimum_password_length (8).
            usage("--password must be at least 8 characters");
        }
        final Path runDir = run;
        Files.createDirectories(home);
        Files.createDirectories(run);
        Files.deleteIfExists(run.resolve("ready"));
        Files.deleteIfExists(run.resolve("port"));
        writeAtomically(run, "neo4j.pid", Long.toString(ProcessHandle.current().pid()));

        if (port == 0) {
            port = freePort();
        }

        long t0 = System.nanoTime();
        log("starting Neo4j " + neo4jVersion() + " home=" + home + " bolt=127.0.0.1:" + port + " settings=" + settings);
        // The --setting values, by name, as a neo4j.conf would hold them (the
        // builder takes raw names only from a file); the settings below win.
        StringBuilder conf = new StringBuilder();
        settings.forEach((k, v) -> conf.append(k).append('=').append(v).append('\n'));
        Path confFile = home.resolve("procgraph-test.conf");
        Files.writeString(confFile, conf.toString(), StandardCharsets.UTF_8);
        DatabaseManagementService dbms = new DatabaseManagementServiceBuilder(home)
                .loadPropertiesFromFile(confFile)
                .setConfig(BoltConnector.enabled, true)
                .setConfig(BoltConnector.listen_address, new SocketAddress("127.0.0.1", port))
                .setConfig(BoltConnector.advertised_address, new SocketAddress("127.0.0.1", port))
                .setConfig(BoltConnector.encryption_level, BoltConnector.EncryptionLevel.DISABLED)
                .setConfig(GraphDatabaseSettings.auth_enabled, true)
                .setConfig(GraphDatabaseSettings.logs_directory, run.resolve("logs"))
                .setConfig(GraphDatabaseSettings.pagecache_memory, ByteUnit.mebiBytes(pagecacheMiB))
                .setConfig(GraphDatabaseSettings.preallocate_logical_logs, false)
                .setConfig(GraphDatabaseSettings.logical_log_rotation_threshold, ByteUnit.mebiBytes(16))
                // Bolt waits 5 s + 5 s for its threads and connections on shutdown by
                // default; a throwaway test server need not.
                .setConfig(BoltConnectorInternalSettings.thread_pool_shutdown_wait_time, Duration.ofSeconds(1))
                .setConfig(BoltConnectorInternalSettings.connection_shutdown_wait_time, Duration.ofSeconds(1))
                .build();

        CountDownLatch stopped = new CountDownLatch(1);
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            log("shutting down");
            try {
                dbms.shutdown();
            } catch (RuntimeException e) {
                log("shutdown failed: " + e);
            }
            try {
                Files.deleteIfExists(runDir.resolve("ready"));
            } catch (IOException ignored) {
                // best effort
            }
            log("stopped");
            stopped.countDown();
        }, "neo4j-shutdown"));

        // Auth is on: the built-in user neo4j starts with password "neo4j" and a
        // forced change. Set the test password (no change required) through the
        // system database before announcing readiness, so no client ever sees the
        // default credentials.
        GraphDatabaseService system = dbms.database(GraphDatabaseSettings.SYSTEM_DATABASE_NAME);
        system.executeTransactionally(
                "ALTER USER neo4j SET PASSWORD $password CHANGE NOT REQUIRED",
                Map.of("password", password));

        // Touch the default database so it is fully up before we say "ready".
        GraphDatabaseService db = dbms.database(GraphDatabaseSettings.DEFAULT_DATABASE_NAME);
        db.executeTransactionally("RETURN 1");

        writeAtomically(run, "port", Integer.toString(port));
        // Unique per start: the Go helper reads this file so that `go test`'s
        // result cache never reuses a result obtained against an earlier server.
        writeAtomically(run, "ready", "bolt://127.0.0.1:" + port + " pid=" + ProcessHandle.current().pid()
                + " started=" + java.time.Instant.now());
        log("ready bolt://127.0.0.1:" + port + " in "
                + Duration.ofNanos(System.nanoTime() - t0).toMillis() + " ms");

        stopped.await();
    }

    private static String neo4jVersion() {
        String v = DatabaseManagementService.class.getPackage().getImplementationVersion();
        return v == null ? "(version unknown)" : v;
    }

    private static int freePort() throws IOException {
        try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            s.setReuseAddress(true);
            return s.getLocalPort();
        }
    }

    private static void writeAtomically(Path dir, String name, String content) throws IOException {
        Path tmp = dir.resolve(name + ".tmp");
        Files.writeString(tmp, content + "\n", StandardCharsets.UTF_8);
        Files.move(tmp, dir.resolve(name), StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
    }

    private static void log(String msg) {
        System.err.println("[neo4j-server] " + java.time.Instant.now() + " " + msg);
        System.err.flush();
    }

    private static void usage(String why) {
        System.err.println("neo4j-server: " + why);
        System.err.println("usage: Main --home DIR --run DIR --password PW [--port N] [--pagecache MiB] [--setting K=V]...");
        System.exit(2);
    }
}

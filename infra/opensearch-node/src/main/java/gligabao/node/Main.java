package gligabao.node;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import org.opensearch.common.logging.LogConfigurator;
import org.opensearch.common.settings.Settings;
import org.opensearch.core.common.transport.TransportAddress;
import org.opensearch.env.Environment;
import org.opensearch.http.HttpServerTransport;
import org.opensearch.node.InternalSettingsPreparer;
import org.opensearch.node.Node;
import org.opensearch.plugins.Plugin;
import org.opensearch.transport.Netty4Plugin;

/**
 * A single OpenSearch node in this JVM, with the plugins given on the classpath
 * (netty4 for HTTP, k-NN, reindex). For tests and local runs only: no security,
 * single-node discovery, bound to 127.0.0.1 unless told otherwise.
 *
 * Usage: Main HOME_DIR HTTP_PORT URL_FILE [BIND_HOST]
 *   HOME_DIR  a fresh directory for data and logs
 *   HTTP_PORT 0 for an ephemeral port
 *   URL_FILE  written with http://BIND_HOST:PORT once the node answers
 *   BIND_HOST the address to listen on (default 127.0.0.1); e.g. the docker bridge's
 *             address, so that `sam local` containers reach the node
 *             (gligabao dev-services)
 */
public final class Main {
    /** Loaded by name: k-NN comes from the unpacked plugin zip, reindex gives _delete_by_query. */
    private static final String[] PLUGINS = {
        "org.opensearch.knn.plugin.KNNPlugin",
        "org.opensearch.index.reindex.ReindexPlugin",
    };

    /** Node's constructor that takes classpath plugins is protected. */
    static final class PluginNode extends Node {
        PluginNode(Environment env, Collection<Class<? extends Plugin>> plugins) {
            super(env, plugins, true);
        }
    }

    @SuppressWarnings("unchecked")
    public static void main(String[] args) throws Exception {
        if (args.length != 3 && args.length != 4) {
            System.err.println("usage: Main HOME_DIR HTTP_PORT URL_FILE [BIND_HOST]");
            System.exit(2);
        }
        Path home = Path.of(args[0]).toAbsolutePath();
        String port = args[1];
        Path urlFile = Path.of(args[2]).toAbsolutePath();
        String bindHost = args.length == 4 ? args[3] : "127.0.0.1";
        Files.createDirectories(home.resolve("data"));
        Files.createDirectories(home.resolve("logs"));
        Files.createDirectories(home.resolve("config"));

        Settings settings = Settings.builder()
            .put("path.home", home.toString())
            .put("path.data", home.resolve("data").toString())
            .put("path.logs", home.resolve("logs").toString())
            .put("cluster.name", "gligabao-test")
            .put("node.name", "gligabao-test-node")
            .put("network.host", bindHost)
            .put("http.port", port)
            .put("transport.port", "0")
            .put("http.type", "netty4")
            .put("transport.type", "netty4")
            .put("discovery.type", "single-node")
            .put("cluster.routing.allocation.disk.threshold_enabled", false)
            .put("action.auto_create_index", true)
            .put("knn.memory.circuit_breaker.enabled", false)
            .build();
        // Logging: log4j2.properties on the classpath (warnings and errors to stdout).
        LogConfigurator.setNodeName("gligabao-test-node");

        Environment env = InternalSettingsPreparer.prepareEnvironment(
            settings, Collections.emptyMap(), home.resolve("config"), () -> "gligabao-test-node");

        List<Class<? extends Plugin>> plugins = new ArrayList<>();
        plugins.add(Netty4Plugin.class);
        for (String name : PLUGINS) {
            plugins.add((Class<? extends Plugin>) Class.forName(name));
        }

        Node node = new PluginNode(env, plugins);
        CountDownLatch stopped = new CountDownLatch(1);
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            try {
                node.close();
                node.awaitClose(20, TimeUnit.SECONDS);
            } catch (IOException | InterruptedException e) {
                e.printStackTrace();
            } finally {
                stopped.countDown();
            }
        }, "node-shutdown"));
        node.start();

        TransportAddress bound = node.injector().getInstance(HttpServerTransport.class)
            .boundAddress().publishAddress();
        // A wildcard bind is reached through loopback from this machine.
        String urlHost = bindHost.equals("0.0.0.0") ? "127.0.0.1" : bindHost;
        String url = "http://" + urlHost + ":" + bound.getPort();
        Path tmp = urlFile.resolveSibling(urlFile.getFileName() + ".tmp");
        Files.writeString(tmp, url + "\n", StandardCharsets.UTF_8);
        Files.move(tmp, urlFile, java.nio.file.StandardCopyOption.REPLACE_EXISTING,
            java.nio.file.StandardCopyOption.ATOMIC_MOVE);
        System.out.println("gligabao opensearch node listening on " + url);
        stopped.await();
    }
}

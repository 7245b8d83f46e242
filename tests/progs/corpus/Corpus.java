// tests/e2e/60-corpus.t: a Java program under mprof and cpprof.  Boxed
// integers in a HashMap of ArrayLists (enough work for the JIT compilers
// to run), a second thread building a string; deterministic output.
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

public class Corpus {
    public static void main(String[] args) throws InterruptedException {
        Map<String, List<Integer>> m = new HashMap<>();
        for (int i = 0; i < 300000; i++)
            m.computeIfAbsent("k" + (i * 7919 % 2003), k -> new ArrayList<>()).add(i);
        long[] sums = new long[2];
        Thread t = new Thread(() -> {
            StringBuilder sb = new StringBuilder();
            for (int i = 0; i < 100000; i++)
                sb.append(i % 10);
            sums[1] = sb.toString().chars().filter(c -> c == '7').count();
        });
        t.start();
        for (List<Integer> l : m.values())
            for (int v : l)
                sums[0] += v;
        t.join();
        TreeMap<String, Integer> sizes = new TreeMap<>();
        for (Map.Entry<String, List<Integer>> e : m.entrySet())
            sizes.put(e.getKey(), e.getValue().size());
        System.out.println(m.size() + " " + sums[0] + " " + sums[1] + " " + sizes.firstEntry());
    }
}

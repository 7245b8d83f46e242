// tests/e2e/60-corpus.t: a Rust program under mprof and cpprof.  Four
// threads each count 200000 words into a HashMap of Vecs (a String per
// word); the main thread merges them into a BTreeMap.  Deterministic.
// Kept to what Debian 12's rustc (1.63) compiles.
use std::collections::{BTreeMap, HashMap};
use std::thread;

fn word(i: u64) -> String {
    format!("w{}", (i * 2654435761) % 997)
}

fn count(part: u64) -> HashMap<String, Vec<u64>> {
    let mut m: HashMap<String, Vec<u64>> = HashMap::new();
    for i in 0..200_000u64 {
        m.entry(word(i + part)).or_default().push(i);
    }
    m
}

fn main() {
    let workers: Vec<_> = (0..4u64)
        .map(|t| thread::spawn(move || count(t)))
        .collect();
    let mut total: BTreeMap<String, usize> = BTreeMap::new();
    for w in workers {
        for (k, v) in w.join().unwrap() {
            *total.entry(k).or_insert(0) += v.len();
        }
    }
    let sum: usize = total.values().sum();
    let first: Vec<String> = total
        .iter()
        .take(3)
        .map(|(k, v)| format!("{}={}", k, v))
        .collect();
    println!("{} words, {} entries, {}", total.len(), sum, first.join(" "));
}

<?php
// tests/e2e/61-corpus-more.t: PHP arrays and strings on the CLI.
$h = [];
for ($i = 0; $i < 100000; $i++) {
	$k = "k" . ($i * 7919 % 1009);
	$h[$k][] = str_repeat("ab", $i % 4);
}
$len = 0;
foreach ($h as $v) { $len += strlen(implode("", $v)); }
ksort($h);
echo count($h), " ", $len, " ", implode(",", array_slice(array_keys($h), 0, 3)), "\n";

# The statistics the benchmark scripts share; they prepend this file to their awk programs.

# The two-sided 95% quantile of Student's t with df degrees of freedom: the half-width of a
# confidence interval is t95(n - 1) x sd / sqrt(n). Exact to three decimals up to df 30; above, the
# value at 30, slightly wide (1.96 at infinity), so an interval is never narrower than it should be.
function t95(df,   table, t) {
  split("12.706 4.303 3.182 2.776 2.571 2.447 2.365 2.306 2.262 2.228 2.201 2.179 2.160 2.145 2.131 " \
        "2.120 2.110 2.101 2.093 2.086 2.080 2.074 2.069 2.064 2.060 2.056 2.052 2.048 2.045 2.042", t, " ")
  return df >= 30 ? t[30] : t[df]
}

# The standard deviation of n values from their sum s and sum of squares q; 0 below 2 values.
# Rounding can put the variance of equal values a hair below 0, where sqrt gives NaN.
function sd_of(n, s, q,   mean, var) {
  if (n < 2) return 0
  mean = s / n; var = (q - n * mean * mean) / (n - 1)
  return var > 0 ? sqrt(var) : 0
}

# The half-width of the 95% t interval of their mean; 0 below 2 values.
function t_half(n, s, q) { return n < 2 ? 0 : t95(n - 1) * sd_of(n, s, q) / sqrt(n) }

# v: the numbers of a space-separated list, ascending; returns their count.
function sorted(list, v,   n, i, j, t) {
  n = split(list, v, " ")
  for (i = 2; i <= n; i++) for (j = i; j > 1 && v[j - 1] + 0 > v[j] + 0; j--) { t = v[j]; v[j] = v[j - 1]; v[j - 1] = t }
  return n
}

function median(list,   v, n) { n = sorted(list, v); return n % 2 ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2 }

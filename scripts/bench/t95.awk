# The two-sided 95% quantile of Student's t with df degrees of freedom: the half-width of a
# confidence interval is t95(n - 1) x sd / sqrt(n). Exact to three decimals up to df 30; above, the
# value at 30, slightly wide (1.96 at infinity), so an interval is never narrower than it should be.
# Shared by the benchmark scripts, which prepend it to their awk programs.
function t95(df,   table, t) {
  split("12.706 4.303 3.182 2.776 2.571 2.447 2.365 2.306 2.262 2.228 2.201 2.179 2.160 2.145 2.131 " \
        "2.120 2.110 2.101 2.093 2.086 2.080 2.074 2.069 2.064 2.060 2.056 2.052 2.048 2.045 2.042", t, " ")
  return df >= 30 ? t[30] : t[df]
}
